// Stores the search words of nodes written before search existed (read_unsearchable.cypher).
UNWIND $rows AS r
MATCH (n) WHERE id(n) = r.id
SET n.words = r.words
RETURN count(n) AS updated
