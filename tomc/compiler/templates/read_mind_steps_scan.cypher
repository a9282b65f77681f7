// The two latest steps a mind graph has an Event for, from every Event: for a graph whose
// root does not know them (read_mind_steps.cypher: written before it kept them, or fewer
// than two left after undos; tomc/engine/recovery.py).
MATCH (e:Event)
WITH e.step AS step ORDER BY step DESC LIMIT 2
RETURN collect(step) AS steps
