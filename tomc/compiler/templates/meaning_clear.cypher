// Every stored vector of this graph, and its mark: another model made them, so every fact
// is embedded again.
OPTIONAL MATCH (k:MeaningMark) DELETE k
WITH count(k) AS marks
MATCH (m:Meaning) DELETE m
RETURN count(m) AS deleted
