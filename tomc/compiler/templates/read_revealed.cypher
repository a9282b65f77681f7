// What entering reveals (policy: reveal contents), read just before the entering: every
// current true value located in the room.
MATCH (t:P {depth: 0})-[:HOLDS]->(b:V)
WHERE b.room = $room
RETURN b.key AS key, b.value AS value, b.many AS many, b.room AS room
ORDER BY key, value
