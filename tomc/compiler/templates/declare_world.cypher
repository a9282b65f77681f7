// A later `agents` / `rooms` line: new nodes in the world graph (each new chain gets its
// perspective in its mind graph: setup_mind.cypher).
MATCH (memory:Memory)
SET memory.rev = $rev
WITH count(*) AS revised
{% include "declare.cypher" %}
