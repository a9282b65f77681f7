// The beliefs the given chains hold at $step (knowledge time), with provenance and the
// claims contested against them by then: what every analysis reads (tomc/analysis/view.py).
{% with when = "b.since <= $step AND (b.until IS NULL OR b.until > $step)" -%}
{% include "held_versions.cypher" %}
{%- endwith %}
