{#- Agents and rooms (MERGE: declaring twice changes nothing, so a declaration cut short is
    finished by running it again), and the declaration itself, for replay. -#}
UNWIND $agents AS name
MERGE (:Agent {name: name})
WITH count(*) AS agents
UNWIND $rooms AS name
MERGE (:Room {name: name})
WITH count(*) AS rooms
MERGE (d:Declaration {rev: $rev})
SET d.text = $text
RETURN count(*) AS declared
