// The beliefs the given chains held once and had closed (superseded) by $step. A version
// closed at the step it began was never held, and is left out.
{% with when = "b.since < b.until AND b.until <= $step" -%}
{% include "held_versions.cypher" %}
{%- endwith %}
