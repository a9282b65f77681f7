// The facts (key, value) of this graph's versions adopted after $after and by $step (never
// one closed where it began, as read_search.cypher): what search by meaning embeds next.
MATCH (v:V) WHERE v.since > $after AND v.since <= $step AND (v.until IS NULL OR v.until > v.since)
RETURN DISTINCT v.key AS key, v.value AS value
