{#- What a change does to the versions of one graph, decided by the engine
    (tomc/compiler/resolve.py; docs/semantics.md sections 2 and 4): copies, creations,
    support, contested claims, closings, each a list of rows naming perspectives by node id
    (`p`; the truth, in the world graph, by depth 0) and versions by `vid`. Every part only
    walks the open versions of its perspective (HOLDS edges), collected then filtered: an
    OPTIONAL MATCH with a WHERE runs one traversal per row on FalkorDB, a filtered list does
    not, and FalkorDB 4.16 misplaces filters on later variables (docs/architecture.md). A
    node taken out of a list must pass a `WHERE ... IS NOT NULL` before CREATE or DELETE use
    it: without one, FalkorDB fails "expected Node".
    `made` is the step that created a node or edge (tomc/runtime/recovery.py undoes an event
    by it). Nothing is deleted: a closed version moves to a HELD edge. -#}
{% macro perspective(row) -%}
{% if world | default(false) %}MATCH (p:P {depth: 0}){% else %}MATCH (p:P) WHERE id(p) = {{ row }}.p{% endif %}
{%- endmacro %}
{% if copies | default(false) -%}
{#- Copy-on-write, first: each chain here starts to own a key, keeping the history it read
    from the chain above it (`source`): closed versions are shared, the open ones copied
    with their contested claims. No CALL {} subqueries: with several rows, FalkorDB 4.x
    bound every row's subquery to the first row's source. #}
UNWIND $copies AS cp
MATCH (p:P) WHERE id(p) = cp.p
MATCH (src:P) WHERE id(src) = cp.source
SET p.owns = p.owns + [cp.key], p.owns_since = p.owns_since + [$step]
WITH p, src, cp
OPTIONAL MATCH (src)-[:HELD]->(old:V)
WITH p, src, cp, [o IN collect(old) WHERE o.key = cp.key] AS shared
FOREACH (o IN shared | CREATE (p)-[:HELD {made: $step}]->(o))
WITH p, src, cp
OPTIONAL MATCH (src)-[:HOLDS]->(open:V)
WITH p, cp, collect(open) AS current
UNWIND cp.open AS o
WITH p, o, [x IN current WHERE x.vid = o.from][0] AS cur
WITH p, o, cur WHERE cur IS NOT NULL
CREATE (p)-[:HOLDS]->(copy:V)
SET copy = properties(cur)
SET copy.vid = o.vid, copy.made = $step
WITH cur, copy
OPTIONAL MATCH (rival:Contest)-[:CONTESTS]->(cur)
FOREACH (r IN CASE WHEN rival IS NULL THEN [] ELSE [rival] END |
  CREATE (r)-[:CONTESTS {made: $step}]->(copy))
WITH count(*) AS copied
{% endif -%}
UNWIND $creates AS n
{{ perspective("n") }}
CREATE (p)-[:HOLDS]->(v:V)
SET v = n.v
WITH count(*) AS created
UNWIND $supports AS s
{{ perspective("s") }}
MATCH (p)-[:HOLDS]->(sv:V)
WITH s, [x IN collect(sv) WHERE x.vid = s.vid][0] AS grown
WITH s, grown WHERE grown IS NOT NULL
SET grown.support = grown.support + s.sources,
    grown.support_since = grown.support_since + [x IN s.sources | $step],
    grown.support_authority = grown.support_authority + [x IN s.sources | s.authority],
    grown.authority = s.top
WITH count(*) AS supported
UNWIND $contests AS r
{{ perspective("r") }}
MATCH (p)-[:HOLDS]->(cv:V)
WITH r, [x IN collect(cv) WHERE x.vid = r.vid][0] AS against
WITH r, against WHERE against IS NOT NULL
CREATE (:Contest {key: r.key, value: r.value, since: $step, kind: $kind, source: r.source,
        authority: r.authority, published: r.published})-[:CONTESTS {made: $step}]->(against)
WITH count(*) AS contested
UNWIND $closes AS c
{{ perspective("c") }}
MATCH (p)-[h:HOLDS]->(hv:V)
WITH p, c, collect([h, hv]) AS open
WITH p, c, [o IN open WHERE o[1].vid = c.vid][0] AS closing,
     [o IN open WHERE o[1].vid = c.by][0] AS successor
WITH p, c, closing[0] AS edge, closing[1] AS old, successor[1] AS new
WHERE old IS NOT NULL
SET old.until = $step, old.valid_to = c.valid_to
DELETE edge
CREATE (p)-[:HELD {made: $step}]->(old)
FOREACH (_ IN CASE WHEN new IS NULL THEN [] ELSE [1] END | CREATE (new)-[:SUPERSEDES]->(old))
WITH count(*) AS closed
