// belief(chain, key, step): the values held at that step (knowledge time), with provenance.
MATCH (p:Perspective)-[:HOLDS]->(b:Belief {key: $key})
WHERE p.agents = $agents AND b.since <= $step AND (b.until IS NULL OR b.until > $step)
OPTIONAL MATCH (c:Contest)-[:CONTESTS]->(b) WHERE c.since <= $step
RETURN b.value AS value, b.since AS since, b.source AS source,
       [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <= $step
        | b.support[i]] AS support,
       b.rule AS rule, collect(c.value) AS contested
ORDER BY value
