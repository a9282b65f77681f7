{#- `published_at(b)`: the publication time version b ranked by at $step. A claim that
    outranked b gave it its own (write.cypher keeps each with its step, the first entry b's
    own; a version never outranked has no list); the entries are in step order, so the
    last one by $step wins. No CASE on whether the list exists: FalkorDB evaluates every
    branch of a CASE (after.cypher), and `range` over a missing list fails. -#}
{% macro published_at(b) -%}
reduce(was = {{ b }}.published,
       j IN range(0, size(coalesce({{ b }}.published_since, [])) - 1) |
       CASE WHEN {{ b }}.published_since[j] <= $step THEN {{ b }}.published_all[j] ELSE was END)
{%- endmacro %}
