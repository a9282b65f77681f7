// The similarity to $vector of the given facts ({key, value}), found by text but not among
// the nearest (read_meaning_near.cypher): the same cosine, computed on each.
UNWIND $facts AS f
MATCH (m:Meaning {key: f.key, value: f.value})
RETURN m.key AS key, m.value AS value, 1.0 - vec.cosineDistance(m.vec, vecf32($vector)) AS similarity
