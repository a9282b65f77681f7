// Versions and events written before search existed, which have no `words` yet: their
// text, for tomc/runtime/search_index.py to derive them (tomc/search_text.py).
MATCH (v:V) WHERE v.words IS NULL
RETURN id(v) AS id, [v.key, v.value, v.source] AS parts
UNION ALL
MATCH (e:Event) WHERE e.words IS NULL
RETURN id(e) AS id, [e.text] AS parts
