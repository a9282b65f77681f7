// belief(chain, key, step): the values held at that step (knowledge time), read from the
// chain's owner of the key, with the event behind each (provenance.cypher).
{%- from "support.cypher" import support_at %}
{% if by_chain | default(false) %}{% include "owner_by_chain.cypher" %}{% else %}{% include "owner_by_id.cypher" %}{% endif %}
{# From the owner (`WITH`: else FalkorDB plans a scan of every version of the graph and a
    walk back to the owner). `current`: the caller knows the graph holds no event after
    $step (engine.answer_if_current), so what is held then is open: only the owner's open
    versions (HOLDS, one per key and value it holds now) are walked, whatever the history.
    An earlier step walks its closed versions too. -#}
WITH owner
MATCH (owner)-[:{{ "HOLDS" if current | default(false) else "HOLDS|HELD" }}]->(b:V)
WHERE b.key = $key AND b.since <= $step AND (b.until IS NULL OR b.until > $step)
OPTIONAL MATCH (rival:Contest)-[link:CONTESTS]->(b)
WHERE rival.since <= $step AND (link.until IS NULL OR link.until > $step)
WITH b, collect(rival.value) AS contested
{% include "provenance.cypher" %}
RETURN b.value AS value, b.since AS since, b.source AS source,
       {{ support_at("b") }} AS support,
       b.rule AS rule, contested, b.kind AS kind, coalesce(b.text, event.text) AS text,
       coalesce(b.line, event.line) AS line,
       coalesce(b.witnesses, event.witnesses) AS witnesses
ORDER BY value
