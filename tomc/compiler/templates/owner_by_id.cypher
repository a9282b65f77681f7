{#- The perspective that stores $key for the chain asked about, by node id ($owner: the
    engine knows which chain owns which key, tomc/compiler/perspectives.py; the truth is
    the world graph's one perspective). An owner holds the key's whole history (a chain
    that starts to own a key copies it), so any step reads there. -#}
MATCH (owner:P) WHERE id(owner) = $owner