// Undo event $step in one graph (a statement of it failed inside its transaction, or a
// writer died before undoing it: tomc/engine/recovery.py). Everything an event writes is
// stamped with its step (`made`, `since`, `step`), and nothing it changes is lost (a
// closed version keeps its value), so undoing is exact: versions it closed reopen; what it
// created goes; support, ownership and publication times it added are taken back.
CALL {
  MATCH (p:P)-[closed:HELD]->(b:V)
  WHERE closed.made = $step AND b.until = $step AND b.made < $step
  SET b.until = null, b.valid_to = null, b.ended_source = null, b.ended_authority = null,
      b.ended_published = null
  CREATE (p)-[:HOLDS]->(b)
  DELETE closed
}
CALL {
  MATCH (b:V) WHERE $step IN b.published_since
  WITH b, [i IN range(0, size(b.published_since) - 1) WHERE b.published_since[i] <> $step]
          AS kept
  {#- `published` first: it reads the list before the list is set. A version left with its
      own entry alone keeps no list (write.cypher). #}
  SET b.published = b.published_all[last(kept)],
      b.published_since = CASE WHEN size(kept) > 1 THEN [i IN kept | b.published_since[i]] END,
      b.published_all = CASE WHEN size(kept) > 1 THEN [i IN kept | b.published_all[i]] END
}
CALL { MATCH ()-[link:HELD]->() WHERE link.made = $step DELETE link }
CALL { MATCH ()-[link:CONTESTS]->() WHERE link.made = $step DELETE link }
CALL { MATCH ()-[link:CONTESTS]->() WHERE link.until = $step SET link.until = null }
CALL { MATCH (rival:Contest) WHERE rival.since = $step DETACH DELETE rival }
CALL { MATCH (b:V) WHERE b.made = $step DETACH DELETE b }
CALL {
  MATCH (b:V) WHERE $step IN b.support_since
  WITH b, [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <> $step] AS kept
  SET b.support = [i IN kept | b.support[i]],
      b.support_since = [i IN kept | b.support_since[i]],
      b.support_authority = [i IN kept | b.support_authority[i]],
      b.authority = reduce(top = b.origin_authority, i IN kept |
                           CASE WHEN b.support_authority[i] > top THEN b.support_authority[i]
                                ELSE top END)
}
CALL {
  MATCH (b:V) WHERE $step IN b.claims_since
  WITH b, [i IN range(0, size(b.claims_since) - 1) WHERE b.claims_since[i] <> $step] AS kept
  SET b.claims_source = [i IN kept | b.claims_source[i]],
      b.claims_authority = [i IN kept | b.claims_authority[i]],
      b.claims_published = [i IN kept | b.claims_published[i]],
      b.claims_since = [i IN kept | b.claims_since[i]]
}
CALL {
  MATCH (p:P) WHERE $step IN p.owns_since
  WITH p, [i IN range(0, size(p.owns) - 1) WHERE p.owns_since[i] <> $step] AS kept
  SET p.owns = [i IN kept | p.owns[i]], p.owns_since = [i IN kept | p.owns_since[i]]
}
CALL { MATCH (e:Event) WHERE e.step = $step DETACH DELETE e }
CALL { MATCH (root:P {depth: 1}) WHERE $step IN root.recent
       SET root.recent = [s IN root.recent WHERE s <> $step] }
{#- Search by meaning's mark (tomc/runtime/meaning_index.py): embedded up to a step this
    undo takes back, the next event of that step would count as embedded already. (A
    vector of the undone fact may stay: a hit is only what a version still holds.) #}
CALL { MATCH (mark:MeaningMark) WHERE mark.step >= $step SET mark.step = $step - 1 }
{% if world -%}
CALL { MATCH ()-[told:TOLD]->() WHERE told.step = $step DELETE told }
CALL { MATCH (heard:Heard) WHERE heard.step = $step DELETE heard }
CALL { MATCH ()-[stay:IN]->() WHERE stay.since = $step DELETE stay }
CALL { MATCH (a)-[was:WAS_IN]->(r) WHERE was.until = $step
       CREATE (a)-[:IN {since: was.since}]->(r) DELETE was }
CALL { MATCH ()-[stay:IN]->() WHERE stay.until = $step SET stay.until = null }
CALL { MATCH (memory:Memory) WHERE memory.step >= $step SET memory.step = $step - 1 }
{% endif -%}
RETURN $step AS undone
