// The open versions of every perspective in one graph, with what resolution compares
// (tomc/compiler/resolve.py Held): what a writer that attaches or catches up decides from.
MATCH (p:P)-[:HOLDS]->(b:V)
RETURN p.agents AS agents, b.vid AS vid, b.key AS key, b.value AS value,
       b.authority AS authority, b.published AS published, b.valid_from AS valid_from,
       b.source AS source, b.support AS support
