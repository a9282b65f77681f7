{#- The event itself in the world graph, and the scenario's step: every world write starts
    here. `minds` lists the mind graphs the event writes (recovery checks each has it);
    `words` is what search matches (tomc/search_text.py). `memory.event`: the node id of
    the event, which the versions it creates keep (write.cypher). -#}
MATCH (memory:Memory)
SET memory.step = $step, memory.rev = $rev
CREATE (event:Event {step: $step, rev: $rev, kind: $kind, text: $text, words: $words,
                     line: $line, witnesses: $witnesses, minds: $minds})
SET memory.event = id(event)
WITH count(*) AS recorded
