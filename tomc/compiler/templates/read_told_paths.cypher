// Who told whom (explain): the tell of $key = $value to $holder at step $since, preceded by
// the first hearing of its speaker, of that speaker's teller, and so on (the `first` TOLD
// edges: one per listener and value), while the steps go back and no agent repeats. Every
// such path is returned, shortest first: each extends the one before.
MATCH (speaker:Agent)-[last:TOLD {key: $key, value: $value, step: $since}]->(holder:Agent {name: $holder})
MATCH heard = (:Agent)-[:TOLD*0.. {key: $key, value: $value, first: true}]->(speaker)
WITH relationships(heard) + [last] AS hops, nodes(heard) + [holder] AS agents
WHERE all(i IN range(0, size(hops) - 2) WHERE hops[i].step < hops[i + 1].step)
  AND all(a IN agents WHERE single(b IN agents WHERE b = a))
RETURN [a IN agents | a.name] AS agents, [h IN hops | h.step] AS steps
ORDER BY size(steps)
