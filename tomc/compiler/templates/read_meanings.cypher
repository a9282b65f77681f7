// What this graph has embedded: each fact's key, value, text and model (meaning_write.cypher).
MATCH (m:Meaning)
RETURN m.key AS key, m.value AS value, m.text AS text, m.model AS model
