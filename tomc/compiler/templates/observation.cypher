// {{ kind }}: a world change observed in its room; the truth adopts it.
{% include "event_node.cypher" %}
{% include "truth.cypher" %}
RETURN count(*) AS resolved
