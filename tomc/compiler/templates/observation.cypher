// A world change observed in its room; the truth adopts it (write.cypher, the
// truth's rows).
{% include "event_node.cypher" %}
{% with world = true %}{% include "write.cypher" %}{% endwith %}
RETURN count(*) AS resolved
