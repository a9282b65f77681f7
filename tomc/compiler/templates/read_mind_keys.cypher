// Every key a mind graph holds a version of (a chain added later under an existing parent
// owns them all, unknown: tomc/compiler/perspectives.py).
MATCH (v:V)
RETURN collect(DISTINCT v.key) AS keys
