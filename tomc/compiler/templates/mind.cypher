// The event in one mind graph: what it does to the versions of the chains it writes,
// decided by the engine (write.cypher). The event is recorded here too, for recovery
// (tomc/engine/recovery.py reads each mind's latest steps).
CREATE (:Event {step: $step, kind: $kind, text: $text, line: $line, witnesses: $witnesses})
WITH count(*) AS recorded
{#- The graph's latest steps, newest first, on its root (one node): recovery reads them
    there instead of sorting every Event (read_mind_steps.cypher); an undo takes its step
    out (undo.cypher). #}
MATCH (root:P {depth: 1})
SET root.recent = ([$step] + coalesce(root.recent, []))[0..8]
WITH count(*) AS noted
{% include "write.cypher" %}
RETURN count(*) AS written
