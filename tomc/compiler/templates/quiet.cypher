// An event that changes no belief (waits, noop): recorded for provenance only.
{% include "event_node.cypher" %}
RETURN size(actors) AS actors
