// The agents of a scenario's world graph, in declaration order (tomc/memory/catalog.py:
// which mind graphs a memory has, before its statements are replayed).
MATCH (a:Agent)
RETURN a.name AS name
ORDER BY a.declared
