// Copy-on-write, before the event's writes: each chain here starts to own a key, keeping
// the history it read from the chain above it (`source`): closed versions are shared,
// the open one is copied with its contested claims, since it may diverge from now on.
UNWIND $copies AS c
MATCH (p:P) WHERE id(p) = c.p
MATCH (src:P) WHERE id(src) = c.source
SET p.owns = p.owns + [c.key], p.owns_since = p.owns_since + [$step]
WITH p, src, c
CALL {
  WITH p, src, c
  MATCH (src)-[:HELD]->(old:V) WHERE old.key = c.key
  CREATE (p)-[:HELD {made: $step}]->(old)
}
CALL {
  WITH p, src, c
  MATCH (src)-[:HOLDS]->(current:V) WHERE current.key = c.key
  CREATE (p)-[:HOLDS]->(copy:V)
  SET copy = properties(current)
  SET copy.made = $step
  WITH current, copy
  MATCH (rival:Contest)-[:CONTESTS]->(current)
  CREATE (rival)-[:CONTESTS {made: $step}]->(copy)
}
RETURN count(*) AS copied
