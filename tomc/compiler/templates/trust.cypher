{#- trusts(L, S): does listener L take what speaker S says about a key (SEMANTICS.md 3)? -#}
{% macro trusts(listener, speaker, key_room) -%}
{%- if trust == "exit_order" -%}
{#- Exit order: S's latest exit from the key's room is later than L's; never = earliest. -#}
({{ speaker }} IS NULL OR
 reduce(latest = 0, x IN [({{ speaker }})-[x:IN]->(r:Room) WHERE r.name = {{ key_room }} AND x.until IS NOT NULL | x.until] |
        CASE WHEN x > latest THEN x ELSE latest END)
 > reduce(latest = 0, x IN [({{ listener }})-[x:IN]->(r:Room) WHERE r.name = {{ key_room }} AND x.until IS NOT NULL | x.until] |
        CASE WHEN x > latest THEN x ELSE latest END))
{%- else -%}
true
{%- endif -%}
{%- endmacro %}
