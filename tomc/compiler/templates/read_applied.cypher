// The statements applied after revision $rev, in order: events and declarations, as .tom
// text. A writer that finds the memory ahead of it replays them (tomc/engine/falkordb.py).
MATCH (e:Event) WHERE e.rev > $rev
RETURN e.rev AS rev, e.text AS text
UNION ALL
MATCH (d:Declaration) WHERE d.rev > $rev
RETURN d.rev AS rev, d.text AS text
