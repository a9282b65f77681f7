{#- The perspective that stores $key for chain $chain, found here: the chain, then the
    chains above it, deepest first, the first that owns the key (the root, depth 1, and the
    truth, depth 0, own everything: tomc/compiler/perspectives.py `owner`). For a session
    that has not loaded which chain owns which key since other writers committed: loading
    it reads every mind, a read needs one chain (tomc/engine/falkordb.py `_belief`). -#}
MATCH (c:P) WHERE c.agents = $chain
MATCH (c)-[:PARENT*0..3]->(a:P)
WITH a ORDER BY a.depth DESC
WITH [x IN collect(a) WHERE x.depth <= 1 OR $key IN x.owns][0] AS owner
