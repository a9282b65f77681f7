// {{ kind }}: the speaker (or source) reaches its listeners ({{ audience }}); the
// believers are the listeners who trust the speaker (policy: trust {{ trust }}).
{% include "event_node.cypher" %}
OPTIONAL MATCH (s:Agent {name: $speaker})
OPTIONAL MATCH (s)-[at:IN]->(speaker_room:Room) WHERE at.until IS NULL
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | CREATE (s)-[:WITNESSED]->(e))
WITH e, s, speaker_room
OPTIONAL MATCH (t:Perspective)-[:HOLDS]->(held:Belief {key: $key})
WHERE size(t.agents) = 0 AND held.until IS NULL
WITH e, s, speaker_room, min(held.room) AS key_room
{% if trust == "exit_order" -%}
{#- Exit order (SEMANTICS.md 3): L trusts S iff S's latest exit from the key's room is
    later than L's; never having left it counts as earliest (0). Exits are aggregated with
    OPTIONAL MATCH: FalkorDB's pattern comprehensions yield one edge per pair of nodes, and
    an agent may have left the same room several times. -#}
OPTIONAL MATCH (s)-[speaker_stay:IN]->(speaker_left:Room)
WHERE speaker_left.name = key_room AND speaker_stay.until IS NOT NULL
WITH e, s, speaker_room, key_room, coalesce(max(speaker_stay.until), 0) AS speaker_exit
{% else -%}
WITH e, s, speaker_room, key_room, 0 AS speaker_exit
{% endif -%}
{% if audience == "speaker_room" -%}
OPTIONAL MATCH (l:Agent)-[here:IN]->(speaker_room) WHERE here.until IS NULL AND l <> s
{%- elif audience == "room" -%}
OPTIONAL MATCH (l:Agent)-[here:IN]->(:Room {name: $room})
WHERE here.until IS NULL AND (s IS NULL OR l <> s)
{%- elif audience == "named" -%}
OPTIONAL MATCH (l:Agent) WHERE l.name IN $listeners AND (s IS NULL OR l <> s)
{%- else -%}
OPTIONAL MATCH (l:Agent) WHERE s IS NULL OR l <> s
{%- endif %}
WITH e, s, key_room, speaker_exit, collect(l) AS heard
FOREACH (l IN heard | CREATE (l)-[:WITNESSED]->(e))
FOREACH (l IN CASE WHEN s IS NULL THEN [] ELSE heard END |
  CREATE (s)-[:TOLD {step: $step, key: $key, value: $value}]->(l))
WITH s, key_room, speaker_exit, heard
UNWIND (CASE WHEN size(heard) = 0 THEN [null] ELSE heard END) AS l
{% if trust == "exit_order" -%}
OPTIONAL MATCH (l)-[listener_stay:IN]->(listener_left:Room)
WHERE listener_left.name = key_room AND listener_stay.until IS NOT NULL
WITH l, s, speaker_exit, coalesce(max(listener_stay.until), 0) AS listener_exit
WITH l, l IS NOT NULL AND (s IS NULL OR speaker_exit > listener_exit) AS trusted
{% else -%}
WITH l, l IS NOT NULL AS trusted
{% endif -%}
RETURN [x IN collect(l) | x.name] AS listeners,
       collect(CASE WHEN trusted THEN l.name END) AS believers
