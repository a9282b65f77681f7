// A world change or state (set, move, in ROOM:). Witnesses: everyone in the room
// (the given room, else the actor's), or the actor alone when in no room.
{% include "event_node.cypher" %}
OPTIONAL MATCH (given:Room {name: $room})
OPTIONAL MATCH (a:Agent)-[at:IN]->(actor_room:Room) WHERE a.name IN $actors AND at.until IS NULL
WITH e, actors, given, collect(actor_room) AS actor_rooms
WITH e, actors, coalesce(given, head(actor_rooms)) AS r
OPTIONAL MATCH (w:Agent)-[here:IN]->(r) WHERE here.until IS NULL
WITH e, actors, r, collect(w) AS present
WITH e, r, CASE WHEN r IS NULL THEN actors ELSE present END AS witnesses
FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END | CREATE (e)-[:AT]->(r))
FOREACH (w IN witnesses | CREATE (w)-[:WITNESSED]->(e))
RETURN [w IN witnesses | w.name] AS witnesses,
       [{key: $key, value: $value, many: $many, room: r.name, source: null, authority: 0,
         published: null, valid_from: ''}] AS facts
