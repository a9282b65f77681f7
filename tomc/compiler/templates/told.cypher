{#- One TOLD edge per listener and fact. It is `first` when it is the listener's first
    hearing of that key = value: each agent then has at most one first hearing of a value,
    and read_told_paths.cypher follows one chain back however often a value was repeated
    (all the TOLD edges together can hold exponentially many paths). -#}
CALL {
  MATCH (s:Agent {name: $speaker})
  UNWIND $listeners AS name
  MATCH (l:Agent {name: name})
  UNWIND $facts AS f
  OPTIONAL MATCH (:Agent)-[earlier:TOLD {key: f.key, value: f.value}]->(l)
  WITH s, l, f, count(earlier) AS before
  CREATE (s)-[:TOLD {step: $step, key: f.key, value: f.value, first: before = 0}]->(l)
}
WITH count(*) AS recorded
