{#- The truth (docs/semantics.md section 2): what an omniscient observer of every event holds,
    resolved like any perspective; $truth says whether it adopts outright (observations,
    claims under credulous or exit-order trust) or by authority; an ending (`ended`, a
    claim that a fact no longer holds) closes instead of adopting. -#}
MATCH (p:P {depth: 0})
UNWIND $facts AS f
WITH p, f, $truth AS force, 'truth' AS rule
{% include ("resolve_ended.cypher" if ended | default(false) else "resolve.cypher") %}
