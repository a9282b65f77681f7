// Every perspective of a mind graph: its node id (statements address perspectives by id),
// its chain, and the keys it owns (tomc/compiler/perspectives.py).
MATCH (p:P)
RETURN id(p) AS id, p.agents AS agents, p.owns AS owns
