{#- The full-text index search reads (tomc/runtime/search_index.py): over the words of
    `label` (V: versions, Event: events; a fixed word), with no stopwords, so that every
    word is found (tomc/search_text.py drops question words from queries instead). -#}
CALL db.idx.fulltext.createNodeIndex({label: '{{ label }}', stopwords: []}, 'words')
