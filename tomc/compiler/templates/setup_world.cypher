// The world graph: the scenario (its step and revision; its policy and the .tom header a
// memory is rebuilt from: tomc/memory/catalog.py), agents, rooms, and the truth (the
// perspective with no agents).
CREATE (:Memory {name: $name, step: 0, rev: $rev, policy: $policy, header: $text})
CREATE (:P {agents: [], depth: 0, owns: [], owns_since: []})
WITH count(*) AS created
{% include "declare.cypher" %}
