// Who told whom (explain): every path of TOLD edges about $key = $value that ends with a
// tell to $holder at step $since, with strictly increasing steps and no agent twice.
MATCH p = (:Agent)-[:TOLD*1..{{ max_hops }} {key: $key, value: $value}]->(:Agent {name: $holder})
WITH relationships(p) AS hops, nodes(p) AS agents
WHERE last(hops).step = $since
  AND all(i IN range(0, size(hops) - 2) WHERE hops[i].step < hops[i + 1].step)
  AND all(a IN agents WHERE single(b IN agents WHERE b = a))
RETURN [a IN agents | a.name] AS agents, [h IN hops | h.step] AS steps
