// The world graph's index of events by step and revision: a writer catching up reads the
// events after its revision (read_applied.cypher), recovery the latest one
// (read_last_event.cypher), without a scan of every event the memory ever had.
CREATE INDEX FOR (e:Event) ON (e.step, e.rev)
