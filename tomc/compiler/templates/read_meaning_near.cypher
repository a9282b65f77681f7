// The $k facts nearest in meaning to $vector, through the vector index (cosine: FalkorDB
// 4.16 and 4.22 yield the distance, 1 - cosine similarity; docs/falkordb.md check 11.4).
CALL db.idx.vector.queryNodes('Meaning', 'vec', $k, vecf32($vector)) YIELD node, score
RETURN node.key AS key, node.value AS value, 1.0 - score AS similarity
