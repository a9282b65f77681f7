// The graph's indexes: whether search's full-text indexes exist (search_index.cypher).
CALL db.indexes() YIELD label, properties, types
RETURN label, properties, types
