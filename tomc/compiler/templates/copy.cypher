// Copy-on-write, before the event's writes (tomc/compiler/resolve.py `copy`): each chain
// here starts to own a key, keeping the history it read from the chain above it (`source`):
// closed versions are shared, the open ones copied under the ids the engine gave them
// (`open`: [{from, vid}]) with their contested claims. No CALL {} subqueries: with several
// rows, FalkorDB 4.x bound every row's subquery to the first row's source. A node taken
// out of a list passes a `WHERE ... IS NOT NULL` before CREATE uses it: without one,
// FalkorDB fails "expected Node".
// Ids go through variables of their own: FalkorDB seeks a node by such a variable, and
// scans every perspective for `id(p) = cp.p`.
UNWIND $copies AS cp
WITH cp, cp.p AS pid, cp.source AS sid
MATCH (p:P) WHERE id(p) = pid
MATCH (src:P) WHERE id(src) = sid
SET p.owns = p.owns + [cp.key], p.owns_since = p.owns_since + [$step]
WITH p, src, cp
OPTIONAL MATCH (src)-[:HELD]->(old:V)
WITH p, src, cp, [o IN collect(old) WHERE o.key = cp.key] AS shared
FOREACH (o IN shared | CREATE (p)-[:HELD {made: $step}]->(o))
WITH p, src, cp
OPTIONAL MATCH (src)-[:HOLDS]->(open:V)
WITH p, cp, collect(open) AS current
UNWIND cp.open AS o
WITH p, o, [x IN current WHERE x.vid = o.from][0] AS cur
WITH p, o, cur WHERE cur IS NOT NULL
CREATE (p)-[:HOLDS]->(copy:V)
SET copy = properties(cur)
SET copy.vid = o.vid, copy.made = $step
WITH cur, copy
OPTIONAL MATCH (rival:Contest)-[link:CONTESTS]->(cur)
FOREACH (r IN CASE WHEN rival IS NULL THEN [] ELSE [rival] END |
  CREATE (r)-[:CONTESTS {made: $step, until: link.until}]->(copy))
RETURN count(*) AS copied
