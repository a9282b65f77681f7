// Agents exit a room: their presence there is closed at this step (kept, not deleted).
{% include "event_node.cypher" %}
UNWIND actors AS a
MATCH (a)-[here:IN]->(r:Room {name: $room}) WHERE here.until IS NULL
SET here.until = $step
RETURN count(a) AS exited
