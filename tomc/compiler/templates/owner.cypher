{#- The perspectives `c` reads each key from: c and the chains above it, deepest first
    (`line`). For a key, the owner is the first of them that owns it (the root, depth 1,
    and the truth, depth 0, own everything): tomc/compiler/perspectives.py. -#}
MATCH (c)-[:PARENT*0..3]->(a:P)
WITH c, a ORDER BY a.depth DESC
WITH c, collect(a) AS line
