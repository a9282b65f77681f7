{#- An ending (docs/language.md "Endings", extending docs/semantics.md section 4) of fact `f` in
    perspective `p`: each current version of f.key it names (of f.value when given;
    adopted from source f.of when given: a retraction) is closed when the ending outranks it
    as a value would (or with `force`): `until` = this step, `valid_to` = the ending's,
    never before the version's valid_from. It moves to a HELD edge and no version replaces
    it, so the chain reads unknown; what ended it (source, authority, publication time) is
    kept on it, for a handoff to pass the ending on. Otherwise the ending is recorded as a contested rival,
    shown as '(ended)' (tomc.dsl.program.ENDED), or (a tie under `ties first`) dropped. A
    chain that holds nothing it names is unchanged: the UNWIND over no targets leaves no
    row. -#}
OPTIONAL MATCH (p)-[h:HOLDS]->(b:V)
WITH p, f, force, collect([h, b]) AS open
UNWIND [x IN open WHERE x[1].key = f.key AND (f.value IS NULL OR x[1].value = f.value)
        AND (f.of IS NULL OR x[1].source = f.of)] AS target
WITH p, f, force, target[0] AS h, target[1] AS b
WITH p, f, h, b, CASE
  WHEN force THEN 'close'
  WHEN f.authority > b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published >= b.published)
    THEN 'close'
  WHEN f.authority = b.authority
       AND (f.published IS NULL OR b.published IS NULL OR f.published > b.published)
    THEN 'close'
  WHEN f.authority = b.authority AND f.published = b.published AND $ties = 'newest'
    THEN 'close'
  WHEN f.authority = b.authority AND f.published = b.published AND $ties = 'first'
    THEN 'ignore'
  ELSE 'contest' END AS outcome
FOREACH (_ IN CASE WHEN outcome = 'close' THEN [1] ELSE [] END |
  SET b.until = $step,
      b.valid_to = CASE WHEN f.valid_to < b.valid_from THEN b.valid_from ELSE f.valid_to END,
      b.ended_source = f.source, b.ended_authority = f.authority,
      b.ended_published = f.published
  DELETE h
  CREATE (p)-[:HELD {made: $step}]->(b))
FOREACH (_ IN CASE WHEN outcome = 'contest' THEN [1] ELSE [] END |
  CREATE (:Contest {key: f.key, value: '(ended)', since: $step, kind: $kind,
          source: f.source, authority: f.authority, published: f.published})
         -[:CONTESTS {made: $step}]->(b))
