// The two latest steps a mind graph has an Event for (tomc/runtime/recovery.py: an event
// is whole when every mind graph it writes has it, and none is ahead of the world).
MATCH (e:Event)
WITH e.step AS step ORDER BY step DESC LIMIT 2
RETURN collect(step) AS steps
