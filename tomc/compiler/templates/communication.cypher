// {{ kind }}: the speaker (or source) reaches its listeners; who told whom is recorded
// for explain{% if truth %}, and the truth resolves the claim{% endif %}.
{% include "event_node.cypher" %}
{% if told -%}
{% include "told.cypher" %}
{% endif -%}
{% if truth -%}
{% include "truth.cypher" %}
{%- endif %}
RETURN count(*) AS done
