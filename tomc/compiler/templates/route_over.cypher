// Rule ({{ rule_text }}): every chain made only of agents in {{ members_text }}{% if excepted %}, except {{ excepted|join(', ') }}{% endif %}.
MATCH (p:Perspective)
WHERE size(p.agents) > 0 AND all(a IN p.agents WHERE a IN ({{ members }}))
{%- for role in excepted %}
  AND NOT coalesce(size(p.agents) = 1 AND p.agents[0] IN {{ role_sets[role] }}, false)
{%- endfor %}
{%- if communication %}
  AND coalesce(p.agents <> [$speaker], true)
{%- endif %}
{% include "adopt.cypher" %}
