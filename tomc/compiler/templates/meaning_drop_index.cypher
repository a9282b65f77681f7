// The vector index of another model's dimension goes before its vectors are embedded
// again (tomc/runtime/meaning_index.py).
DROP VECTOR INDEX FOR (m:Meaning) ON (m.vec)
