// Every event up to $step, in order, with its witnesses: the transcript, and the provenance
// the analyses cite.
MATCH (e:Event) WHERE e.step <= $step
RETURN e.step AS step, e.kind AS kind, e.text AS text, e.line AS line,
       e.witnesses AS witnesses
ORDER BY step
