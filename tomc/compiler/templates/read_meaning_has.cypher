// Which of the given facts ({key, value}) already have a vector (a fact adopted again, or
// read again after an undo): not embedded twice.
UNWIND $facts AS f
MATCH (m:Meaning {key: f.key, value: f.value})
RETURN m.key AS key, m.value AS value
