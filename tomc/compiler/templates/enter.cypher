// Agents enter a room: their open presence elsewhere is closed (entering leaves the
// previous room silently), a new one opens here. Witnesses: everyone in the room after.
{% include "event_node.cypher" %}
MATCH (r:Room {name: $room})
CREATE (e)-[:AT]->(r)
WITH e, r, actors
UNWIND actors AS a
OPTIONAL MATCH (a)-[open:IN]->(:Room) WHERE open.until IS NULL
FOREACH (_ IN CASE WHEN open IS NULL THEN [] ELSE [1] END | SET open.until = $step)
CREATE (a)-[:IN {since: $step}]->(r)
WITH DISTINCT e, r
MATCH (w:Agent)-[here:IN]->(r) WHERE here.until IS NULL
WITH e, r, collect(w) AS witnesses
FOREACH (w IN witnesses | CREATE (w)-[:WITNESSED]->(e))
RETURN [w IN witnesses | w.name] AS witnesses
