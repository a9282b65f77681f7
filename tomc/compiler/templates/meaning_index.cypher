{#- The vector index search by meaning reads (tomc/runtime/meaning_index.py): over the
    `vec` of each Meaning node (one per fact this graph holds), cosine, of the embedding
    model's dimension (an int the code checks; FalkorDB takes no parameter in OPTIONS). -#}
CREATE VECTOR INDEX FOR (m:Meaning) ON (m.vec) OPTIONS {dimension: {{ dimension }}, similarityFunction: 'cosine'}
