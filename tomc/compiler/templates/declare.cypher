{#- Agents and rooms (MERGE: declaring twice changes nothing, so a declaration cut short is
    finished by running it again), each agent with when it was declared (revision,
    place in its line: the order of a memory's agents), and the declaration itself, for
    replay. -#}
UNWIND range(0, size($agents) - 1) AS i
MERGE (a:Agent {name: $agents[i]})
ON CREATE SET a.declared = [$rev, i]
WITH count(*) AS agents
UNWIND $rooms AS name
MERGE (:Room {name: name})
WITH count(*) AS rooms
MERGE (d:Declaration {rev: $rev})
SET d.text = $text
RETURN count(*) AS declared
