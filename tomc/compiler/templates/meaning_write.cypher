// One Meaning node per fact (key lowercased, value): the text embedded, the model that
// embedded it and its vector (read_meaning_near.cypher).
UNWIND $rows AS r
MERGE (m:Meaning {key: r.key, value: r.value})
SET m.text = r.text, m.model = $model, m.vec = vecf32(r.vec)
RETURN count(m) AS written
