// Rule ({{ rule_text }}): the chain {{ path|join(' > ') }}{% if 'listener' in path %}, for each listener{% endif %}{% if condition %} {{ condition }}{% endif %}.
{% if 'listener' in path -%}
UNWIND $listeners AS listener
WITH listener WHERE {{ condition_expr }}
{% endif -%}
MATCH (p:Perspective)
WHERE p.agents = [{{ path_exprs|join(', ') }}]
{%- if communication %} AND coalesce(p.agents <> [$speaker], true){% endif %}
{% include "adopt.cypher" %}
