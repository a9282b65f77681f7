// handoff: the speaker hands the listener the facts read from its mind ($facts), as one
// private message: both witness it, and one TOLD edge per fact records who told whom.
// Exit-order trust judges one key's room and a handoff carries several keys: under
// trust exit_order the listener is not a believer (policy here: trust {{ trust }}).
{% include "event_node.cypher" %}
MATCH (s:Agent {name: $speaker}), (l:Agent {name: $listener})
CREATE (s)-[:WITNESSED]->(e), (l)-[:WITNESSED]->(e)
FOREACH (f IN $facts | CREATE (s)-[:TOLD {step: $step, key: f.key, value: f.value}]->(l))
RETURN [l.name] AS listeners,
       {% if trust == "exit_order" %}[]{% else %}[l.name]{% endif %} AS believers
