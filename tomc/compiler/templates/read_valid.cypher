// Valid time: among every value the chain adopted by this step (superseded ones too,
// contested ones never), those whose valid interval [valid_from, valid_to) holds $date.
MATCH (p:Perspective)-[:HOLDS]->(b:Belief {key: $key})
WHERE p.agents = $agents AND b.since <= $step
  AND coalesce(b.valid_from, '') <= $date AND (b.valid_to IS NULL OR $date < b.valid_to)
OPTIONAL MATCH (c:Contest)-[:CONTESTS]->(b) WHERE c.since <= $step
RETURN b.value AS value, b.since AS since, b.source AS source,
       [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <= $step
        | b.support[i]] AS support,
       b.rule AS rule, collect(c.value) AS contested
ORDER BY value
