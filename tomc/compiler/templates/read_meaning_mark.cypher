// How far this graph's facts are embedded: the step, the model and the dimension of its
// vector index (null: none yet) (meaning_mark.cypher); no row before the first search by
// meaning.
MATCH (k:MeaningMark)
RETURN k.step AS step, k.model AS model, k.dimension AS dimension
