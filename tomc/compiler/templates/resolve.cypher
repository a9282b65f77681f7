{#- Resolution (docs/semantics.md section 4) of fact `f` in perspective `p`, given `force` and the
    `rule` that named p: adopt into unknown, corroborate an equal value, supersede (close
    the current version at this step, valid until the new value's valid_from, and link the
    new one to it), record a contested claim, or (a tie under `ties first`) ignore it. Nothing is deleted: open versions hang on
    HOLDS edges, closed ones on HELD edges, so a write only walks what is current.
    Support (`f.support`: the fact's sources) grows in place, each source kept with the step it joined and its authority, so
    reads at a past step see the support and authority of then. `made` is the step that
    created a node or edge (tomc/runtime/recovery.py undoes an event by it).
    The current versions are collected, then filtered: an OPTIONAL MATCH with a WHERE on
    the belief runs one traversal per row on FalkorDB, a filtered list does not. -#}
OPTIONAL MATCH (p)-[h:HOLDS]->(b:V)
WITH p, f, force, rule, collect([h, b]) AS open
WITH p, f, force, rule,
     [x IN open WHERE x[1].key = f.key AND (NOT f.many OR x[1].value = f.value)][0] AS current
WITH p, f, force, rule, current[0] AS h, current[1] AS b
WITH p, f, rule, h, b, CASE
  WHEN b IS NULL THEN 'adopt'
  WHEN b.value = f.value THEN 'corroborate'
  WHEN force THEN 'supersede'
  WHEN f.authority > b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published >= b.published)
    THEN 'supersede'
  WHEN f.authority = b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published > b.published)
    THEN 'supersede'
  WHEN f.authority = b.authority AND f.published = b.published AND $ties = 'newest'
    THEN 'supersede'
  WHEN f.authority = b.authority AND f.published = b.published AND $ties = 'first'
    THEN 'ignore'
  ELSE 'contest' END AS outcome
WITH p, f, rule, h, b, outcome,
     [s IN f.support WHERE NOT s IN coalesce(b.support, [])] AS new_sources
FOREACH (_ IN CASE WHEN outcome = 'corroborate' AND size(new_sources) > 0 THEN [1] ELSE [] END |
  SET b.support = b.support + new_sources,
      b.support_since = b.support_since + [s IN new_sources | $step],
      b.support_authority = b.support_authority + [s IN new_sources | f.authority],
      b.authority = CASE WHEN f.authority > b.authority THEN f.authority ELSE b.authority END)
FOREACH (_ IN CASE WHEN outcome = 'supersede' THEN [1] ELSE [] END |
  SET b.until = $step,
      b.valid_to = CASE WHEN f.valid_from < b.valid_from THEN b.valid_from ELSE f.valid_from END
  DELETE h
  CREATE (p)-[:HELD {made: $step}]->(b)
  CREATE (p)-[:HOLDS]->(:V {key: f.key, value: f.value, many: f.many, since: $step,
          kind: $kind, rule: rule, source: f.source, authority: f.authority,
          origin_authority: f.authority, published: f.published, valid_from: f.valid_from,
          room: f.room, made: $step, words: f.words,
          support: f.support,
          support_since: [s IN f.support | $step],
          support_authority: [s IN f.support | f.authority]
          })-[:SUPERSEDES]->(b))
FOREACH (_ IN CASE WHEN outcome = 'adopt' THEN [1] ELSE [] END |
  CREATE (p)-[:HOLDS]->(:V {key: f.key, value: f.value, many: f.many, since: $step,
          kind: $kind, rule: rule, source: f.source, authority: f.authority,
          origin_authority: f.authority, published: f.published, valid_from: f.valid_from,
          room: f.room, made: $step, words: f.words,
          support: f.support,
          support_since: [s IN f.support | $step],
          support_authority: [s IN f.support | f.authority]}))
FOREACH (_ IN CASE WHEN outcome = 'contest' THEN [1] ELSE [] END |
  CREATE (:Contest {key: f.key, value: f.value, since: $step, kind: $kind, source: f.source,
          authority: f.authority, published: f.published})-[:CONTESTS {made: $step}]->(b))
