// A communication: the speaker (or source) reaches its listeners; who told whom is
// recorded for explain{% if truth %}, and the truth resolves the claim (write.cypher, the
// truth's rows){% endif %}.
{% include "event_node.cypher" %}
{% if told -%}
{% include "told.cypher" %}
{% endif -%}
{% if truth -%}
{% with world = true %}{% include "write.cypher" %}{% endwith %}
{%- endif %}
RETURN count(*) AS done
