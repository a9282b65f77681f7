// What a memory's world graph says about it (tomc/memory/catalog.py): its name, policy,
// header (.tom text to rebuild the checker from) and the step reached.
MATCH (m:Memory)
RETURN m.name AS name, m.policy AS policy, m.header AS header, m.step AS step
