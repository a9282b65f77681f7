// `about SUBJECT [for CHAIN] [within N]` (tomc/analysis/about.py; docs/language.md,
// "Links"): the facts chain $chains holds at $step within $within links of $subject, in
// this one read, a bounded traversal over the chain's facts. Links are values ("@NAME"),
// not edges, so each hop joins facts' values to subjects: from each subject reached at the
// hop before, in the order they were reached, the subjects its facts link to, then the
// subjects of the facts that link to it (each list in the order of the facts' keys and
// values); a subject is reached once, by the first of those paths. Rows come nearest
// first, in the order the walk reached their subjects, a subject's facts by key and value.
// The chain's facts, each read from the chain's owner of its key (held_versions.cypher).
{%- from "support.cypher" import support_at, authority_at %}
MATCH (c:P) WHERE c.agents IN $chains
{% include "owner.cypher" %}
UNWIND line AS a
MATCH (a)-[:HOLDS|HELD]->(b:V)
WHERE b.since <= $step AND (b.until IS NULL OR b.until > $step)
WITH c, a, b, [x IN line WHERE x.depth <= 1 OR b.key IN x.owns][0] AS owner
WHERE owner = a
WITH c, b ORDER BY b.key, b.value
WITH c, collect(b) AS facts
{%- from "after.cypher" import after %}
{%- from "published.cypher" import published_at %}
{# Each fact's subject: its key before the last dot (the whole key when there is none, or
    when that dot comes first). Every `substring` is given a start and a length within its
    text, for every text (after.cypher: docs/falkordb.md checks 12.1 and 12.2). -#}
WITH c, facts, [f IN facts |
       [i IN range(0, size(f.key) - 1) WHERE substring(f.key, i, 1) = '.']] AS dots
WITH c, facts, [i IN range(0, size(facts) - 1) |
       CASE WHEN coalesce(last(dots[i]), 0) = 0 THEN facts[i].key
            ELSE substring(facts[i].key, 0, coalesce(last(dots[i]), 0)) END] AS subjects
WITH c, facts, subjects, reduce(seen = [[$subject]], hop IN range(1, $within) |
       seen + reduce(new = [], p IN [q IN seen WHERE size(q) = hop] |
         reduce(more = new, t IN
                  [i IN range(0, size(facts) - 1)
                   WHERE subjects[i] = last(p) AND facts[i].value STARTS WITH '@'
                   | {{ after("facts[i].value", "1") }}]
                  + [i IN range(0, size(facts) - 1) WHERE facts[i].value = '@' + last(p)
                     | subjects[i]] |
           CASE WHEN any(q IN seen WHERE last(q) = t) OR any(q IN more WHERE last(q) = t)
                THEN more ELSE more + [p + [t]] END))) AS seen
UNWIND range(0, size(seen) - 1) AS rank
UNWIND [i IN range(0, size(facts) - 1) WHERE subjects[i] = last(seen[rank])] AS i
WITH c, rank, seen[rank] AS path, facts[i] AS b
RETURN c.agents AS chain, path, b.key AS key, b.value AS value, b.since AS since,
       b.kind AS kind, b.rule AS rule, b.source AS source,
       {{ published_at("b") }} AS published,
       b.valid_from AS valid_from,
       {{ support_at("b") }} AS support,
       {{ authority_at("b") }} AS authority
ORDER BY rank, key, value
