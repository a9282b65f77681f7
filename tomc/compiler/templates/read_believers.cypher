// Exit-order trust (docs/semantics.md section 3), read just before a communication:
// listener L trusts speaker S about a key iff S's latest exit from the room holding the
// key's object is later than L's; never having left it counts as earliest (0); no
// speaker: trusted.
// Exits are aggregated with OPTIONAL MATCH: FalkorDB's pattern comprehensions yield one
// edge per pair of nodes, and an agent may have left the same room several times.
OPTIONAL MATCH (t:P {depth: 0})-[:HOLDS]->(held:V) WHERE held.key = $key
WITH min(held.room) AS key_room
OPTIONAL MATCH (s:Agent {name: $speaker})-[stay:IN|WAS_IN]->(left:Room)
WHERE left.name = key_room AND stay.until IS NOT NULL
WITH key_room, coalesce(max(stay.until), 0) AS speaker_exit
UNWIND $listeners AS name
OPTIONAL MATCH (l:Agent {name: name})-[listener_stay:IN|WAS_IN]->(listener_left:Room)
WHERE listener_left.name = key_room AND listener_stay.until IS NOT NULL
WITH name, speaker_exit, coalesce(max(listener_stay.until), 0) AS listener_exit
RETURN collect(CASE WHEN $speaker IS NULL OR speaker_exit > listener_exit THEN name END)
       AS believers
