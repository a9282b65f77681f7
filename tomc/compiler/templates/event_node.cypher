{#- The event itself, and who performed it: every world write starts here. -#}
CREATE (e:Event {step: $step, kind: $kind, text: $text, line: $line})
WITH e
OPTIONAL MATCH (actor:Agent) WHERE actor.name IN $actors
FOREACH (_ IN CASE WHEN actor IS NULL THEN [] ELSE [1] END | CREATE (actor)-[:PERFORMED]->(e))
WITH e, collect(actor) AS actors
