{%- from "trust.cypher" import trusts with context -%}
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
WITH e, s, key_room, collect(l) AS heard
FOREACH (l IN heard | CREATE (l)-[:WITNESSED]->(e))
FOREACH (l IN CASE WHEN s IS NULL THEN [] ELSE heard END |
  CREATE (s)-[:TOLD {step: $step, key: $key}]->(l))
WITH s, key_room, heard
UNWIND (CASE WHEN size(heard) = 0 THEN [null] ELSE heard END) AS l
WITH l, CASE WHEN l IS NULL THEN false ELSE {{ trusts("l", "s", "key_room") }} END AS trusted
RETURN [x IN collect(l) | x.name] AS listeners,
       collect(CASE WHEN trusted THEN l.name END) AS believers
