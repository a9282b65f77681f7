// An event that changes no belief, recorded for provenance only.
{% include "event_node.cypher" %}
RETURN recorded
