// A graph written before versions carried their id and provenance (tomc/compiler/resolve.py):
// each such version gets an id no engine gives (negative, from its node id: unique in the
// graph) and the kind, text, line and witnesses of the event that made it. Meaning is
// unchanged, so running it twice, or beside a writer, does no harm.
MATCH (b:V) WHERE b.vid IS NULL
OPTIONAL MATCH (e:Event) WHERE e.step = b.since
WITH b, collect(e)[0] AS made
SET b.vid = -1 - id(b), b.kind = coalesce(b.kind, made.kind), b.text = made.text,
    b.line = made.line, b.witnesses = made.witnesses
RETURN count(b) AS upgraded
