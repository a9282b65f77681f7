// Every stored vector of this graph: another model made them, so all are embedded again.
MATCH (m:Meaning) DELETE m
RETURN count(m) AS deleted
