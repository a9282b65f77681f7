{#- `after(t, n)`: text t without its first n characters ('' when it has no more), for any
    t. FalkorDB 4.16's `substring(t, n)` counts the rest of t in bytes and walks that many
    characters, past the end of a non-ASCII string (a walk killed the server that way), and
    FalkorDB evaluates every branch of a CASE, the branches not taken too: so the start and
    length given are within t for every t, not only where the answer is used
    (docs/falkordb.md checks 12.1 and 12.2). -#}
{% macro after(t, n) -%}
substring({{ t }}, CASE WHEN size({{ t }}) > ({{ n }}) THEN ({{ n }}) ELSE size({{ t }}) END,
          CASE WHEN size({{ t }}) > ({{ n }}) THEN size({{ t }}) - ({{ n }}) ELSE 0 END)
{%- endmacro %}
