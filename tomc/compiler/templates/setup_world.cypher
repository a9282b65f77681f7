// The world graph: agents, rooms, and the truth (the perspective with no agents).
UNWIND $agents AS name
CREATE (:Agent {name: name})
WITH count(*) AS created
UNWIND $rooms AS name
CREATE (:Room {name: name})
WITH count(*) AS created
CREATE (:Perspective {agents: [], chain: 'truth', depth: 0})
