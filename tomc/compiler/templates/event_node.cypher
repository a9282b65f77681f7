{#- The event itself in the world graph, and the scenario's step: every world write starts
    here. `minds` lists the mind graphs the event writes (recovery checks each has it);
    `words` is what search matches (tomc/search_text.py). -#}
MATCH (memory:Memory)
SET memory.step = $step, memory.rev = $rev
CREATE (:Event {step: $step, rev: $rev, kind: $kind, text: $text, words: $words, line: $line,
                witnesses: $witnesses, minds: $minds})
WITH count(*) AS recorded
