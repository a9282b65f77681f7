// The open versions of every perspective in one graph, with what resolution compares
// (tomc/compiler/resolve.py Held): what a writer that attaches or catches up decides from.
MATCH (p:P)-[:HOLDS]->(b:V)
RETURN p.agents AS agents, b.vid AS vid, b.key AS key, b.value AS value,
       b.authority AS authority, b.published AS published, b.valid_from AS valid_from,
       b.source AS source, b.support AS support,
       coalesce(b.support_authority, [x IN b.support | b.authority]) AS support_authority,
       [i IN range(0, size(coalesce(b.claims_source, b.support)) - 1)
        | [coalesce(b.claims_source, b.support)[i],
           coalesce(b.claims_authority, b.support_authority,
                    [x IN b.support | b.authority])[i],
           coalesce(b.claims_published[i], b.published, '')]] AS claimed,
       [(rival:Contest)-[link:CONTESTS]->(b)
        | [rival.value, rival.source, rival.authority, rival.published, link.until IS NULL]]
         AS rivals
