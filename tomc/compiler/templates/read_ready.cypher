// ready(procedure, chain, step): each step of the procedure read at $step (knowledge
// time), its status and the verdict (ready_steps.cypher).
{% with valid = false -%}
{% include "ready_steps.cypher" %}
{%- endwith %}
