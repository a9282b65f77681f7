// How far this graph's facts are embedded: the step and the model (meaning_mark.cypher);
// no row before the first search by meaning.
MATCH (k:MeaningMark)
RETURN k.step AS step, k.model AS model
