// The latest steps a mind graph has an Event for, newest first, as its root keeps them
// (mind.cypher): tomc/engine/recovery.py checks an event is whole (every mind graph it
// writes has it, and none is ahead of the world) from the two latest. Fewer than two (a
// graph written before roots kept them, or after undos): read_mind_steps_scan.cypher.
MATCH (root:P {depth: 1})
RETURN root.recent AS steps
