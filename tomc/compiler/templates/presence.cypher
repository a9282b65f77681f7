// {{ kind }}: agents {% if kind == "enter" %}enter a room (leaving their previous one
// silently){% else %}leave a room{% endif %}; presence is kept, never deleted (exits are
// read back for exit-order trust): an agent's open stay is its one `IN` edge, a closed one
// a `WAS_IN`, so finding the open stay walks one edge, not every stay it ever had (a
// memory stored before keeps its older closed stays as `IN` with `until`).
{% include "event_node.cypher" %}
MATCH (r:Room {name: $room})
UNWIND $actors AS name
MATCH (a:Agent {name: name})
{% if kind == "enter" -%}
OPTIONAL MATCH (a)-[open:IN]->(was:Room) WHERE open.until IS NULL
FOREACH (_ IN CASE WHEN open IS NULL THEN [] ELSE [1] END |
  CREATE (a)-[:WAS_IN {since: open.since, until: $step}]->(was)
  DELETE open)
CREATE (a)-[:IN {since: $step}]->(r)
{%- else -%}
MATCH (a)-[here:IN]->(r) WHERE here.until IS NULL
CREATE (a)-[:WAS_IN {since: here.since, until: $step}]->(r)
DELETE here
{%- endif %}
RETURN count(*) AS moved
