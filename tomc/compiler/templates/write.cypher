{#- What a change does to the versions of one graph, decided by the engine
    (tomc/compiler/resolve.py; docs/semantics.md sections 2 and 4): creations, support,
    contested claims, closings (by an ending, or by a successor created first), each a
    list of rows naming perspectives by node id (`p`; the truth, in the world graph, by
    depth 0) and versions by `vid`. Every part starts from its perspective and walks
    only its open versions (HOLDS edges). Adopting and superseding are always there; the
    rarer parts (support, contests, kept disputes, endings) only when a change has rows for them:
    FalkorDB caches a plan per statement text and graph, and its size grows with every
    clause (a part costs 20-50 KB), so a graph keeps few, small plans. `made` is the step
    that created a node or edge (tomc/engine/recovery.py undoes an event by it). Nothing
    is deleted: a closed version moves to a HELD edge. -#}
{#- A perspective by node id: the id goes through a variable of its own first, or FalkorDB
    scans every perspective for each row instead of seeking it. -#}
{% macro perspective(row, keep="") -%}
{% if world | default(false) %}MATCH (p:P {depth: 0}){% else %}WITH {{ row }}{{ keep }}, {{ row }}.p AS pid
MATCH (p:P) WHERE id(p) = pid{% endif %}
{%- endmacro %}
{#- A version keeps every claim of its value (`claims_*`: source, authority, publication
    time, step) for the dominance rule (semantics.md section 4, "Dominance"): only a dated
    one, since an undated claim is never compared (read_open.cypher falls back on the
    support). The event's text, line and witnesses are not copied onto it: `event` is the
    node id of the graph's `Event` that holds them (noted on the Memory node or the mind's
    root by event_node.cypher or mind.cypher; read by provenance.cypher). #}
MATCH (anchor:{{ "Memory" if world | default(false) else "P {depth: 1}" }})
WITH anchor.event AS event
UNWIND $creates AS n
{{ perspective("n", ", event") }}
WITH p, n, event, $stored[n.f] AS f
CREATE (p)-[:HOLDS]->(v:V)
SET v = f, v.vid = n.vid, v.rule = n.rule, v.since = $step, v.made = $step, v.event = event,
    v.claims_source = CASE WHEN f.published IS NOT NULL THEN f.support END,
    v.claims_authority = CASE WHEN f.published IS NOT NULL
                              THEN [x IN f.support | f.authority] END,
    v.claims_published = CASE WHEN f.published IS NOT NULL
                              THEN [x IN f.support | f.published] END,
    v.claims_since = CASE WHEN f.published IS NOT NULL THEN [x IN f.support | $step] END,
    v.kind = $kind
WITH count(*) AS created
{% if supports | default(false) -%}
UNWIND $supports AS s
{{ perspective("s") }}
MATCH (p)-[:HOLDS]->(grown:V) WHERE grown.vid = s.vid
{#- Every claim of the value (`claims_*`, for the dominance rule), '' for no source or time
    (a list holds no null); a version without them (created undated: its claims are
    never compared; or written before claims were kept) takes one per source of its
    support, dated its own (first: the support is read before it grows). The step and
    authority of each supporter (`support_since`, `support_authority`) and the authority
    the version came with (`origin_authority`) are kept only once its support grows: until
    then every supporter came with the version, at `since` with its `authority`, and the
    lists are not stored (support.cypher reads them so). #}
SET grown.claims_source = coalesce(grown.claims_source, grown.support)
                          + [c IN s.claims | coalesce(c.source, '')],
    grown.claims_authority = coalesce(grown.claims_authority, grown.support_authority,
                                      [x IN grown.support | grown.authority])
                             + [c IN s.claims | c.authority],
    grown.claims_published = coalesce(grown.claims_published,
                                      [x IN grown.support | coalesce(grown.published, '')])
                             + [c IN s.claims | coalesce(c.published, '')],
    grown.claims_since = coalesce(grown.claims_since, grown.support_since,
                                  [x IN grown.support | grown.since])
                         + [c IN s.claims | $step],
    grown.origin_authority = coalesce(grown.origin_authority, grown.authority),
    grown.support_since = coalesce(grown.support_since, [x IN grown.support | grown.since])
                          + [x IN s.sources | $step],
    grown.support_authority = coalesce(grown.support_authority,
                                       [x IN grown.support | grown.authority])
                              + s.authorities,
    grown.support = grown.support + s.sources,
    grown.authority = s.top
{#- A claim that outranks the version gives it its publication time: a version ranks by
    its best claim (semantics.md section 4). Each time is kept with the step it came
    (`published_since`, `published_all`, the first entry the version's own), so a read as
    of a step sees the one held then (held_versions.cypher) and undo.cypher takes it back.
    No list is kept for a version never outranked: most are not. #}
FOREACH (_ IN CASE WHEN s.published IS NULL THEN [] ELSE [1] END |
  SET grown.published_since = coalesce(grown.published_since, [grown.since]) + [$step],
      grown.published_all = coalesce(grown.published_all, [grown.published]) + [s.published],
      grown.published = s.published)
{#- The rivals the new claim dominates leave the dispute from this step (`until` on the
    link: a read of an earlier step still sees them; the link stays, for a successor
    that does not dominate them). #}
WITH s, grown
OPTIONAL MATCH (rival:Contest)-[link:CONTESTS]->(grown)
WHERE link.until IS NULL AND [rival.value, coalesce(rival.source, ''), rival.authority,
                              coalesce(rival.published, '')] IN s.drop
WITH s, collect(link) AS links
FOREACH (l IN links | SET l.until = $step)
WITH count(*) AS supported
{% endif -%}
{% if contests | default(false) -%}
UNWIND $contests AS r
{{ perspective("r") }}
MATCH (p)-[:HOLDS]->(against:V) WHERE against.vid = r.vid
{#- A claim that a claim of the value held dominates is superseded on arrival: linked, but
    not disputed (`until`: this step). #}
CREATE (:Contest {key: r.key, value: r.value, since: $step, kind: $kind, source: r.source,
        authority: r.authority, published: r.published})
       -[:CONTESTS {made: $step, until: CASE WHEN r.dominated THEN $step END}]->(against)
WITH count(*) AS contested
{% endif -%}
{% if keeps | default(false) -%}
{#- A dated supersede keeps the dispute (semantics.md section 4, "Dominance"): the
    successor `by` (created above) is recorded against by the closed version's rivals but
    those of its own value (the same Contest nodes, linked again), and by the closed
    version's claims (`claims`: each source's latest), each disputed unless a claim of the
    successor dominates it (`drop`, `dominated`: linked with `until` this step). The claims
    of the value are made first: the rivals relinked next are read from `old`, which they
    do not contest. #}
UNWIND $keeps AS k
{{ perspective("k") }}
MATCH (p)-[:HOLDS]->(old:V) WHERE old.vid = k.vid
WITH p, k, old
MATCH (p)-[:HOLDS]->(new:V) WHERE new.vid = k.by
FOREACH (c IN k.claims |
  CREATE (:Contest {key: old.key, value: old.value, since: $step, kind: old.kind,
          source: c.source, authority: c.authority, published: c.published})
         -[:CONTESTS {made: $step, until: CASE WHEN c.dominated THEN $step END}]->(new))
WITH k, old, new
OPTIONAL MATCH (rival:Contest)-[:CONTESTS]->(old)
WITH new, k, collect(rival) AS rivals
FOREACH (r IN [x IN rivals WHERE x.value <> k.value] |
  CREATE (r)-[:CONTESTS {made: $step,
                         until: CASE WHEN [r.value, coalesce(r.source, ''), r.authority,
                                           coalesce(r.published, '')] IN k.drop
                                THEN $step END}]->(new))
WITH count(*) AS disputed
{% endif -%}
{% if closes | default(false) -%}
UNWIND $closes AS c
{{ perspective("c") }}
MATCH (p)-[h:HOLDS]->(old:V) WHERE old.vid = c.vid
SET old.until = $step, old.valid_to = c.valid_to, old.ended_source = c.source,
    old.ended_authority = c.authority, old.ended_published = c.published
DELETE h
CREATE (p)-[:HELD {made: $step}]->(old)
WITH count(*) AS closed
{% endif -%}
UNWIND $supersedes AS u
{{ perspective("u") }}
MATCH (p)-[h:HOLDS]->(old:V) WHERE old.vid = u.vid
SET old.until = $step, old.valid_to = u.valid_to
DELETE h
CREATE (p)-[:HELD {made: $step}]->(old)
{#- The successor once `p` and `old` are bound: two version patterns in one MATCH made
    FalkorDB scan every version. #}
WITH p, u, old
MATCH (p)-[:HOLDS]->(new:V) WHERE new.vid = u.by
CREATE (new)-[:SUPERSEDES]->(old)
WITH count(*) AS superseded
