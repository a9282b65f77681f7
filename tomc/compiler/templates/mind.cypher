// The event in one mind graph: each chain it writes resolves the facts about its keys
// (chains that read their parent's history are not written: tomc/compiler/perspectives.py).
// The event is recorded here too, for provenance read from this graph alone.
CREATE (:Event {step: $step, kind: $kind, text: $text, line: $line, witnesses: $witnesses})
WITH count(*) AS recorded
UNWIND $writes AS w
MATCH (p:P) WHERE id(p) = w.p
UNWIND [x IN $facts WHERE x.key IN w.keys] AS f
WITH p, f, w.force AS force, w.rule AS rule
{% include ("resolve_ended.cypher" if ended | default(false) else "resolve.cypher") %}
RETURN count(*) AS resolved
