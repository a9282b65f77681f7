// handoff S -> R write, in S's mind graph: the facts to send. Every value S holds that its
// model of R (the chain S > R) does not hold, except what S learnt in a private tell;
// sent as S's own words (source S, S's authority). Bound as $facts for the event.
MATCH (mine:Perspective)-[:HOLDS]->(b:Belief)
WHERE mine.agents = [$speaker] AND b.until IS NULL AND b.kind <> 'tell'
OPTIONAL MATCH (model:Perspective)-[:HOLDS]->(known:Belief)
WHERE model.agents = [$speaker, $listener] AND known.until IS NULL
  AND known.key = b.key AND known.value = b.value
WITH b, count(known) AS copies
WHERE copies = 0
WITH b ORDER BY b.key, b.value
RETURN collect({key: b.key, value: b.value, many: b.many, room: null, source: $speaker,
                authority: $authority, published: null, valid_from: ''}) AS facts
