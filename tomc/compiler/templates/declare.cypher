// A live session declares agents or rooms after it has started: their nodes in the world
// graph (each agent's perspectives are created by setup_mind.cypher).
UNWIND $agents AS name
MERGE (:Agent {name: name})
WITH count(*) AS declared
UNWIND $rooms AS name
MERGE (:Room {name: name})
RETURN count(*) AS declared
