// The evidence walk (`explain [CHAIN] KEY follow N`, docs/language.md "Links"): the facts
// chain $chain holds at $step, and from the values of $key that link to a subject ("@NAME")
// the facts about that subject, and on through their links, up to $follow links; a bounded
// traversal over the chain's facts, in this one read. Links are values, not edges (the
// writes store a value as written), so each hop joins a fact's value to the next facts' keys.
// Every shortest path of subjects is kept (`paths`, from $subject, the subject of $key); a
// subject reached at one hop is not followed again later, nor twice on one path.
// The chain's facts, each read from the chain's owner of its key (held_versions.cypher).
{%- from "support.cypher" import support_at, authority_at %}
MATCH (c:P) WHERE c.agents IN $chains
{% include "owner.cypher" %}
UNWIND line AS a
MATCH (a)-[:HOLDS|HELD]->(b:V)
WHERE b.since <= $step AND (b.until IS NULL OR b.until > $step)
WITH c, a, b, [x IN line WHERE x.depth <= 1 OR b.key IN x.owns][0] AS owner
WHERE owner = a
WITH c, collect(b) AS facts
{%- from "after.cypher" import after %}
{%- from "published.cypher" import published_at %}
{#- `about(f, s)`: fact f is about subject s (its key's part before the last dot, or the
    whole key when it has none). Hop 1 follows the links of $key only. -#}
{% macro about(s) -%}
((f.key STARTS WITH ({{ s }} + '.')
  AND NOT ({{ after("f.key", "size(" ~ s ~ ") + 1") }} CONTAINS '.'))
 OR (f.key = {{ s }} AND NOT ({{ s }} CONTAINS '.')))
{%- endmacro %}
WITH c, facts, reduce(paths = [[$subject]], hop IN range(1, $follow) |
       paths + reduce(new = [], step IN reduce(all = [], p IN [q IN paths WHERE size(q) = hop] |
                 all + [f IN facts WHERE f.value STARTS WITH '@'
                          AND CASE WHEN hop = 1 THEN f.key = $key
                                   ELSE {{ about("last(p)") }} END
                          AND NOT (any(q IN paths WHERE '@' + last(q) = f.value))
                        | p + [{{ after("f.value", "1") }}]]) |
               CASE WHEN step IN new THEN new ELSE new + [step] END)) AS paths
UNWIND paths AS path
UNWIND [f IN facts WHERE CASE WHEN size(path) = 1 THEN f.key = $key
                              ELSE {{ about("last(path)") }} END] AS b
RETURN c.agents AS chain, path, b.key AS key, b.value AS value, b.since AS since,
       b.kind AS kind, b.rule AS rule, b.source AS source,
       {{ published_at("b") }} AS published,
       b.valid_from AS valid_from,
       {{ support_at("b") }} AS support,
       {{ authority_at("b") }} AS authority
