{#- trusts(L, S): does listener L take what speaker S says about a key (SEMANTICS.md 3)? -#}
{#- Each call names its own variables: FalkorDB confuses two pattern comprehensions
    in one expression that reuse variable names. -#}
{% macro latest_exit(agent, key_room) -%}
reduce(latest_{{ agent }} = 0, until_{{ agent }} IN [({{ agent }})-[stay_{{ agent }}:IN]->(room_{{ agent }}:Room) WHERE room_{{ agent }}.name = {{ key_room }} AND stay_{{ agent }}.until IS NOT NULL | stay_{{ agent }}.until] |
       CASE WHEN until_{{ agent }} > latest_{{ agent }} THEN until_{{ agent }} ELSE latest_{{ agent }} END)
{%- endmacro %}
{% macro trusts(listener, speaker, key_room) -%}
{%- if trust == "exit_order" -%}
{#- Exit order: S's latest exit from the key's room is later than L's; never = earliest. -#}
({{ speaker }} IS NULL OR
 {{ latest_exit(speaker, key_room) }}
 > {{ latest_exit(listener, key_room) }})
{%- else -%}
true
{%- endif -%}
{%- endmacro %}
