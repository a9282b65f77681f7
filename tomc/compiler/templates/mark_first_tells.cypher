// Who told whom, for explain: a TOLD edge of this step is `first` when it is the first time
// its listener heard that key = value. Each agent then has at most one first hearing of a
// value, so read_told_paths.cypher follows one chain back however often a value was
// repeated (all the TOLD edges together can hold exponentially many paths).
MATCH (:Agent)-[told:TOLD {step: $step}]->(listener:Agent)
OPTIONAL MATCH (:Agent)-[earlier:TOLD]->(listener)
WHERE earlier.key = told.key AND earlier.value = told.value AND earlier.step < $step
WITH told, count(earlier) AS before
SET told.first = before = 0
RETURN count(told) AS told
