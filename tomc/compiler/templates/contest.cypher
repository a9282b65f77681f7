// A handoff's caveats (tomc/analysis/handoff.py `handed_over`), after its facts are
// resolved: each rival of a handed-over fact is recorded as a contested claim against what
// each written chain now holds about the key (one current value: rivals exist only for
// cardinality one), unless that is the rival's own value. Chains that read their parent
// share its versions, and so its contested claims.
UNWIND $writes AS w
MATCH (p:P) WHERE id(p) = w.p
UNWIND [x IN $rivals WHERE x.key IN w.keys] AS r
OPTIONAL MATCH (p)-[:HOLDS]->(held:V)
WITH p, r, [x IN collect(held) WHERE x.key = r.key][0] AS b
WITH r, b WHERE b IS NOT NULL AND b.value <> r.value
CREATE (:Contest {key: r.key, value: r.value, since: $step, kind: $kind, source: r.source,
        authority: r.authority, published: null})-[:CONTESTS {made: $step}]->(b)
RETURN count(*) AS contested
