// Provenance of a belief: the event at that step, and who witnessed it.
MATCH (e:Event {step: $step})
OPTIONAL MATCH (w:Agent)-[:WITNESSED]->(e)
RETURN e.step AS step, e.kind AS kind, e.text AS text, e.line AS line,
       collect(w.name) AS witnesses
