// The graph's range indexes, as (label, properties): a world graph stored before one of
// them was made gets it on attach (tomc/engine/falkordb.py `_indexed`).
CALL db.indexes() YIELD label, properties, types
RETURN label, [p IN properties WHERE 'RANGE' IN types[p]] AS properties
