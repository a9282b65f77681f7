// The world graph's index of who heard which value (told.cypher): a hearing is found by
// listener, key and value without walking the listener's TOLD edges.
CREATE INDEX FOR (h:Heard) ON (h.agent, h.key, h.value)
