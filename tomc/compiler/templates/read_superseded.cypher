// The beliefs the given chains held once and had closed (superseded) by $step. A version
// closed at the step it began was never held, and is left out.
UNWIND $chains AS chain
MATCH (p:Perspective)-[:HOLDS]->(b:Belief)
WHERE p.agents = chain AND b.since < b.until AND b.until <= $step
RETURN p.agents AS chain, b.key AS key, b.value AS value, b.since AS since,
       b.until AS until, b.kind AS kind, b.rule AS rule, b.source AS source,
       [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <= $step
        | b.support[i]] AS support,
       reduce(a = b.origin_authority, i IN range(0, size(b.support) - 1) |
              CASE WHEN b.support_since[i] <= $step AND b.support_authority[i] > a
                   THEN b.support_authority[i] ELSE a END) AS authority, [] AS rivals
