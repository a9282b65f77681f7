// The event in one mind graph: what it does to the versions of the chains it writes,
// decided by the engine (write.cypher). The event is recorded here too, for recovery
// (tomc/runtime/recovery.py reads each mind's latest steps).
CREATE (:Event {step: $step, kind: $kind, text: $text, line: $line, witnesses: $witnesses})
WITH count(*) AS recorded
{% include "write.cypher" %}
RETURN count(*) AS written
