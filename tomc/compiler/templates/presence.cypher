// {{ kind }}: agents {% if kind == "enter" %}enter a room (leaving their previous one
// silently){% else %}leave a room{% endif %}; presence is kept, never deleted (exits are
// read back for exit-order trust).
{% include "event_node.cypher" %}
MATCH (r:Room {name: $room})
UNWIND $actors AS name
MATCH (a:Agent {name: name})
{% if kind == "enter" -%}
OPTIONAL MATCH (a)-[open:IN]->(:Room) WHERE open.until IS NULL
FOREACH (_ IN CASE WHEN open IS NULL THEN [] ELSE [1] END | SET open.until = $step)
CREATE (a)-[:IN {since: $step}]->(r)
{%- else -%}
MATCH (a)-[here:IN]->(r) WHERE here.until IS NULL
SET here.until = $step
{%- endif %}
RETURN count(*) AS moved
