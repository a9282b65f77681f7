// The event in one mind graph: each chain it writes resolves the facts about its keys
// (chains that read their parent's history are not written: tomc/compiler/perspectives.py),
// the values ($facts) first, then the endings ($ends; a handoff may carry both). A fact
// `about` X (hearsay a handoff carries) goes only to the writes of chains' models of X.
// The event is recorded here too, for provenance read from this graph alone.
CREATE (:Event {step: $step, kind: $kind, text: $text, line: $line, witnesses: $witnesses})
WITH count(*) AS recorded
{% if values | default(false) -%}
UNWIND $writes AS w
MATCH (p:P) WHERE id(p) = w.p
UNWIND [x IN $facts WHERE x.key IN w.keys AND coalesce(x.about, '') = coalesce(w.about, '')] AS f
WITH p, f, w.force AS force, w.rule AS rule
{% include "resolve.cypher" %}
WITH count(*) AS resolved
{% endif -%}
{% if ended | default(false) -%}
UNWIND $writes AS w
MATCH (p:P) WHERE id(p) = w.p
UNWIND [x IN $ends WHERE x.key IN w.keys] AS f
WITH p, f, w.force AS force, w.rule AS rule
{% include "resolve_ended.cypher" %}
WITH count(*) AS resolved
{% endif -%}
RETURN count(*) AS resolved
