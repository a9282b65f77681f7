// The event in one mind graph: what it does to the versions of the chains it writes,
// decided by the engine (write.cypher). The event is recorded here too, for recovery
// (tomc/engine/recovery.py reads each mind's latest steps).
CREATE (event:Event {step: $step, kind: $kind, text: $text, line: $line, witnesses: $witnesses})
WITH id(event) AS recorded
{#- The graph's latest steps, newest first, on its root (one node): recovery reads them
    there instead of sorting every Event (read_mind_steps.cypher); an undo takes its step
    out (undo.cypher). `root.event`: the node id of the event, which the versions it
    creates keep (write.cypher). #}
MATCH (root:P {depth: 1})
SET root.recent = ([$step] + coalesce(root.recent, []))[0..8], root.event = recorded
WITH count(*) AS noted
{% include "write.cypher" %}
RETURN count(*) AS written
