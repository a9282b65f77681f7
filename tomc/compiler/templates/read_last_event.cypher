// The step a scenario's world graph has reached and the mind graphs its event there
// writes (tomc/engine/recovery.py: is that event whole?).
MATCH (m:Memory)
OPTIONAL MATCH (e:Event) WHERE e.step = m.step
RETURN m.step AS step, e.minds AS minds
