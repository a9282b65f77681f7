// Every fact of this graph held by $step has its vector from $model, in a vector index of
// $dimension (null: no fact yet, no index) (read_meaning_mark.cypher).
MERGE (k:MeaningMark)
SET k.step = $step, k.model = $model, k.dimension = $dimension
RETURN k.step AS step
