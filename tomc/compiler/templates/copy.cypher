// Copy-on-write, before the event's writes: each chain here starts to own a key, keeping
// the history it read from the chain above it (`source`): closed versions are shared,
// the open one is copied with its contested claims, since it may diverge from now on.
// No CALL {} subqueries: with several rows, FalkorDB 4.x bound every row's subquery to
// the first row's source (each copy got the first chain's current version).
UNWIND $copies AS c
MATCH (p:P) WHERE id(p) = c.p
MATCH (src:P) WHERE id(src) = c.source
SET p.owns = p.owns + [c.key], p.owns_since = p.owns_since + [$step]
WITH p, src, c
OPTIONAL MATCH (src)-[:HELD]->(old:V)
WITH p, src, c, [o IN collect(old) WHERE o.key = c.key] AS closed
FOREACH (o IN closed | CREATE (p)-[:HELD {made: $step}]->(o))
WITH p, src, c
OPTIONAL MATCH (src)-[:HOLDS]->(open:V)
WITH p, c, [o IN collect(open) WHERE o.key = c.key] AS current
UNWIND current AS cur
CREATE (p)-[:HOLDS]->(copy:V)
SET copy = properties(cur)
SET copy.made = $step
WITH cur, copy
OPTIONAL MATCH (rival:Contest)-[:CONTESTS]->(cur)
FOREACH (r IN CASE WHEN rival IS NULL THEN [] ELSE [rival] END |
  CREATE (r)-[:CONTESTS {made: $step}]->(copy))
RETURN count(*) AS copied
