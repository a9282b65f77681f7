// A world graph written before `Heard` nodes (told.cypher): one per listener and value
// from its first hearing (the `first` TOLD edge), so a later tell of a value a listener
// heard before is not taken for its first. MERGE: running it twice does no harm.
MATCH (:Agent)-[t:TOLD {first: true}]->(l:Agent)
MERGE (h:Heard {agent: l.name, key: t.key, value: t.value})
ON CREATE SET h.step = t.step
RETURN count(h) AS upgraded
