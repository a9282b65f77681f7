{#- Resolution (SEMANTICS.md section 4), for every perspective p in scope and every fact:
    adopt into unknown, corroborate an equal value, supersede (close the old belief at
    this step and link the new one to it), or record a contested claim. Nothing is deleted.
    force: adopt outright (observations, credulous and exit-order trust, and chains that
    end with the speaker, who is taken to believe what it says).
    Support grows in place, so each supporting source is kept with the step it joined and
    its authority (support_since, support_authority), and origin_authority is the authority
    the belief was adopted with: reads at a past step see the support and authority of
    then. -#}
UNWIND $facts AS f
OPTIONAL MATCH (p)-[:HOLDS]->(b:Belief {key: f.key})
WHERE b.until IS NULL AND (NOT f.many OR b.value = f.value)
WITH p, f, b, {{ force }} AS force
WITH p, f, b, CASE
  WHEN b IS NULL THEN 'adopt'
  WHEN b.value = f.value THEN 'corroborate'
  WHEN force THEN 'supersede'
  WHEN f.authority > b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published >= b.published)
    THEN 'supersede'
  WHEN f.authority = b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published > b.published)
    THEN 'supersede'
  ELSE 'contest' END AS outcome
WITH p, f, b, outcome,
     f.source IS NOT NULL AND NOT f.source IN coalesce(b.support, []) AS new_source
FOREACH (_ IN CASE WHEN outcome = 'corroborate' THEN [1] ELSE [] END |
  SET b.support = b.support + CASE WHEN new_source THEN [f.source] ELSE [] END,
      b.support_since = b.support_since + CASE WHEN new_source THEN [$step] ELSE [] END,
      b.support_authority = b.support_authority
                            + CASE WHEN new_source THEN [f.authority] ELSE [] END,
      b.authority = CASE WHEN f.authority > b.authority THEN f.authority ELSE b.authority END)
FOREACH (_ IN CASE WHEN outcome = 'supersede' THEN [1] ELSE [] END |
  SET b.until = $step, b.valid_to = f.valid_from
  CREATE (p)-[:HOLDS]->(:Belief {key: f.key, value: f.value, many: f.many, since: $step,
          kind: $kind, rule: $rule, source: f.source, authority: f.authority, published: f.published,
          valid_from: f.valid_from, room: f.room,
          support: CASE WHEN f.source IS NULL THEN [] ELSE [f.source] END,
          support_since: CASE WHEN f.source IS NULL THEN [] ELSE [$step] END,
          support_authority: CASE WHEN f.source IS NULL THEN [] ELSE [f.authority] END,
          origin_authority: f.authority})-[:SUPERSEDES]->(b))
FOREACH (_ IN CASE WHEN outcome = 'adopt' THEN [1] ELSE [] END |
  CREATE (p)-[:HOLDS]->(:Belief {key: f.key, value: f.value, many: f.many, since: $step,
          kind: $kind, rule: $rule, source: f.source, authority: f.authority, published: f.published,
          valid_from: f.valid_from, room: f.room,
          support: CASE WHEN f.source IS NULL THEN [] ELSE [f.source] END,
          support_since: CASE WHEN f.source IS NULL THEN [] ELSE [$step] END,
          support_authority: CASE WHEN f.source IS NULL THEN [] ELSE [f.authority] END,
          origin_authority: f.authority}))
FOREACH (_ IN CASE WHEN outcome = 'contest' THEN [1] ELSE [] END |
  CREATE (:Contest {key: f.key, value: f.value, since: $step, kind: $kind, source: f.source,
          authority: f.authority, published: f.published})-[:CONTESTS]->(b))
RETURN outcome, count(*) AS chains
