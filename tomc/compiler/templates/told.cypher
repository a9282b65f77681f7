{#- One TOLD edge per listener and fact. It is `first` when it is the listener's first
    hearing of that key = value: each agent then has at most one first hearing of a value,
    and read_told_paths.cypher follows one chain back however often a value was repeated
    (all the TOLD edges together can hold exponentially many paths). Whether a listener
    heard a value before is one `Heard` node per (listener, key, value), found through the
    world graph's index (index_heard.cypher), never a walk of the TOLD edges into the
    listener: those grow with the memory's history (docs/storage.md, "What each event
    costs"). -#}
CALL {
  MATCH (s:Agent {name: $speaker})
  UNWIND $listeners AS name
  MATCH (l:Agent {name: name})
  UNWIND $facts AS f
  WITH s, l, name, f.key AS key, f.value AS value
  MERGE (h:Heard {agent: name, key: key, value: value})
  ON CREATE SET h.step = $step
  CREATE (s)-[:TOLD {step: $step, key: key, value: value, first: h.step = $step}]->(l)
}
WITH count(*) AS recorded
