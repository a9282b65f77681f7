{#- The event behind each version `b` (with `contested`), as `event`: the graph's `Event`
    whose node id the version keeps (`event`: write.cypher; a copy keeps its original's,
    in the same graph), sought by id. Versions hold no copy of the event's text, line or
    witnesses; one written by an older tomc does instead, and the reads take it first. -#}
WITH b, contested, b.event AS made
OPTIONAL MATCH (event:Event) WHERE id(event) = made
