// A range index on Meaning.key, so that writing a fact's vector (meaning_write.cypher)
// finds its node without a scan.
CREATE INDEX FOR (m:Meaning) ON (m.key)
