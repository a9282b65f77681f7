// The graph's indexes, every column (4.16 and 4.22 name theirs alike; `status` says
// whether a new index is still being built): search's full-text indexes
// (search_index.cypher).
CALL db.indexes()
