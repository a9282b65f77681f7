{%- from "support.cypher" import support_at, authority_at %}
{#- The versions of chains $chains as of $step (filtered by `when`), each read from the
    chain's owner of its key, with provenance and the rivals recorded by then: the rows of
    tomc/analysis/view.py's Held. -#}
{%- from "published.cypher" import published_at %}
MATCH (c:P) WHERE c.agents IN $chains
{% include "owner.cypher" %}
UNWIND line AS a
MATCH (a)-[:HOLDS|HELD]->(b:V)
WHERE {{ when }}
{#- The owner test is a projection, not part of the MATCH's WHERE: FalkorDB 4.16 placed
    that filter before the traversal binds `b`, so every chain read its root's versions
    (docs/architecture.md, "Filters on later variables"). #}
WITH c, a, b, [x IN line WHERE x.depth <= 1 OR b.key IN x.owns][0] AS owner
WHERE owner = a
OPTIONAL MATCH (rival:Contest)-[link:CONTESTS]->(b)
WHERE rival.since <= $step AND (link.until IS NULL OR link.until > $step)
RETURN c.agents AS chain, b.key AS key, b.value AS value, b.since AS since,
       CASE WHEN b.until IS NOT NULL AND b.until <= $step THEN b.until END AS until,
       b.kind AS kind, b.rule AS rule, b.source AS source,
       {{ published_at("b") }} AS published,
       b.valid_from AS valid_from,
       CASE WHEN b.until IS NOT NULL AND b.until <= $step AND b.ended_authority IS NOT NULL
            THEN {source: b.ended_source, authority: b.ended_authority,
                  published: b.ended_published, valid_to: b.valid_to} END AS ending,
       {{ support_at("b") }} AS support,
       {{ authority_at("b") }} AS authority,
       collect(CASE WHEN rival IS NULL THEN null
               ELSE {value: rival.value, source: rival.source, authority: rival.authority,
                     step: rival.since, kind: rival.kind} END) AS rivals
