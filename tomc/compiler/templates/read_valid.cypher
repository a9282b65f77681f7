// Valid time: among every value the chain adopted by this step (superseded ones too,
// contested ones never), those whose valid interval [valid_from, valid_to) holds $date, as
// known at this step: an interval closed by a later event is still open here (docs/semantics.md
// 5.3: an answer about step s does not change when later events are added).
{%- from "support.cypher" import support_at %}
{% if by_chain | default(false) %}{% include "owner_by_chain.cypher" %}{% else %}{% include "owner_by_id.cypher" %}{% endif %}
{# From the owner (read_belief.cypher says why): its versions, open and closed. -#}
WITH owner
MATCH (owner)-[:HOLDS|HELD]->(b:V)
WHERE b.key = $key AND b.since <= $step
  AND coalesce(b.valid_from, '') <= $date
  AND (b.valid_to IS NULL OR b.until > $step OR $date < b.valid_to)
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
