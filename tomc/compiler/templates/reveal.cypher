// What entering reveals (policy: reveal contents): every current true value located
// in the room, observed by the witnesses of the entering.
MATCH (t:Perspective)-[:HOLDS]->(b:Belief)
WHERE size(t.agents) = 0 AND b.until IS NULL AND b.room = $room
RETURN collect({key: b.key, value: b.value, many: b.many, room: b.room, source: null,
                authority: 0, published: null, valid_from: ''}) AS facts
