// The truth: what an omniscient observer of every event holds (SEMANTICS.md section 2).
MATCH (p:Perspective) WHERE size(p.agents) = 0
{% include "adopt.cypher" %}
