// Search over the events' .tom text (docs/language.md, "Search"): the events up to $step
// whose words match $query, through the full-text index on Event.words.
CALL db.idx.fulltext.queryNodes('Event', $query) YIELD node
WITH node WHERE node.step <= $step
RETURN node.step AS step, node.kind AS kind, node.text AS text, node.line AS line,
       node.witnesses AS witnesses
