// The beliefs the given chains hold at $step (knowledge time), with provenance and the
// claims contested against them by then: what every analysis reads (tomc/analysis/view.py).
UNWIND $chains AS chain
MATCH (p:Perspective)-[:HOLDS]->(b:Belief)
WHERE p.agents = chain AND b.since <= $step AND (b.until IS NULL OR b.until > $step)
OPTIONAL MATCH (c:Contest)-[:CONTESTS]->(b) WHERE c.since <= $step
RETURN p.agents AS chain, b.key AS key, b.value AS value, b.since AS since,
       null AS until, b.kind AS kind, b.rule AS rule, b.source AS source,
       [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <= $step
        | b.support[i]] AS support,
       reduce(a = b.origin_authority, i IN range(0, size(b.support) - 1) |
              CASE WHEN b.support_since[i] <= $step AND b.support_authority[i] > a
                   THEN b.support_authority[i] ELSE a END) AS authority,
       collect(CASE WHEN c IS NULL THEN null
               ELSE {value: c.value, source: c.source, authority: c.authority,
                     step: c.since, kind: c.kind} END) AS rivals
