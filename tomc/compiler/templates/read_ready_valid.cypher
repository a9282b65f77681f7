// ready(procedure, chain, step) on $date: each step read in valid time, as known at $step
// (read_valid.cypher), its status and the verdict (ready_steps.cypher).
{% with valid = true -%}
{% include "ready_steps.cypher" %}
{%- endwith %}
