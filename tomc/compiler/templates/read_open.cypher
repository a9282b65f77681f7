// The open versions of every perspective in one graph, with what resolution compares
// (tomc/compiler/resolve.py Held): what a writer that attaches or catches up decides from.
MATCH (p:P)-[:HOLDS]->(b:V)
RETURN p.agents AS agents, b.vid AS vid, b.key AS key, b.value AS value,
       b.authority AS authority, b.published AS published, b.valid_from AS valid_from,
       b.source AS source, b.support AS support, b.support_authority AS support_authority,
       coalesce(b.support_published, [x IN b.support | coalesce(b.published, '')])
         AS support_published,
       [(rival:Contest)-[link:CONTESTS]->(b) WHERE link.until IS NULL
        | [rival.value, rival.source, rival.authority, rival.published]] AS rivals
