// Every fact of this graph held by $step has its vector from $model (read_meaning_mark.cypher).
MERGE (k:MeaningMark)
SET k.step = $step, k.model = $model
RETURN k.step AS step
