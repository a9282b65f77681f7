{%- from "support.cypher" import support_at, authority_at %}
{#- ready(procedure, chain, step): for each step of the procedure ($requires: a list of
    {key, value}, value null for "any known value"), the values the chain (the truth, for
    $agents = []) holds about the key, read from its owner of the key, at $step (knowledge
    time) or, when `valid`, valid on $date as known at $step (read_valid.cypher); then each
    step's status and the verdict (tomc/readiness.py, docs/language.md "Procedures"). -#}
MATCH (c:P {agents: $agents})
{% include "owner.cypher" %}
UNWIND range(0, size($requires) - 1) AS i
WITH i, $requires[i] AS req, line
WITH i, req, [x IN line WHERE x.depth <= 1 OR req.key IN x.owns][0] AS owner
OPTIONAL MATCH (owner)-[:HOLDS|HELD]->(b:V)
WHERE b.key = req.key AND b.since <= $step
{%- if valid %}
  AND coalesce(b.valid_from, '') <= $date
  AND (b.valid_to IS NULL OR b.until > $step OR $date < b.valid_to)
{%- else %}
  AND (b.until IS NULL OR b.until > $step)
{%- endif %}
OPTIONAL MATCH (rival:Contest)-[link:CONTESTS]->(b)
WHERE rival.since <= $step AND (link.until IS NULL OR link.until > $step)
WITH i, b, collect(rival.value) AS rivals
{#- FalkorDB evaluates the map below even when b is null: hence the coalesce. #}
WITH i, collect(CASE WHEN b IS NULL THEN null ELSE {
       value: b.value, rivals: rivals,
       support: {{ support_at("b", "j") }},
       authority: {{ authority_at("b", "k") }}} END) AS held
WITH i, held, [h IN held | h.value] AS held_values
WITH i, held, held_values,
     CASE WHEN size(held_values) = 0 THEN 'unknown'
          WHEN $requires[i].value IS NULL OR $requires[i].value IN held_values
          THEN 'satisfied'
          ELSE 'blocked' END AS status
ORDER BY i
WITH collect({index: i, status: status, held: held}) AS steps
RETURN steps,
       CASE WHEN any(s IN steps WHERE s.status = 'blocked') THEN 'blocked'
            WHEN any(s IN steps WHERE s.status = 'unknown') THEN 'unknown'
            ELSE 'ready' END AS verdict
