// Perspectives in one mind graph (docs/semantics.md section 2): a node per chain that
// starts with the agent, linked to its parent chain; `owns` lists the keys a chain holds
// itself (a new chain under an existing parent owns every key so far, with no history: it
// is unknown).
// MERGE: running it again adds what is missing and nothing else.
UNWIND $chains AS c
MERGE (p:P {agents: c.agents})
ON CREATE SET p.depth = size(c.agents), p.owns = c.owns,
              p.owns_since = [k IN c.owns | $step]
WITH p, c
OPTIONAL MATCH (parent:P {agents: c.agents[0..size(c.agents) - 1]})
WHERE size(c.agents) > 1
FOREACH (_ IN CASE WHEN parent IS NULL THEN [] ELSE [1] END | MERGE (p)-[:PARENT]->(parent))
RETURN id(p) AS id, p.agents AS agents
