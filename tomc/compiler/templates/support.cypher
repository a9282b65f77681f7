{#- Support and authority of version `b` as of $step. A version keeps each supporter's step
    and authority (`support_since`, `support_authority`) and the authority it came with
    (`origin_authority`) only once its support grew (write.cypher): until then every
    supporter came with it, at `since`, with its `authority`, and the lists are not stored
    (docs/storage.md, "What each event costs"). `i`: the index's name, one the caller
    does not use. -#}
{% macro support_at(b, i="i") -%}
[{{ i }} IN range(0, size(coalesce({{ b }}.support, [])) - 1)
 WHERE coalesce({{ b }}.support_since[{{ i }}], {{ b }}.since) <= $step | {{ b }}.support[{{ i }}]]
{%- endmacro %}
{% macro authority_at(b, i="i") -%}
reduce(top = coalesce({{ b }}.origin_authority, {{ b }}.authority),
       {{ i }} IN range(0, size(coalesce({{ b }}.support, [])) - 1) |
       CASE WHEN coalesce({{ b }}.support_since[{{ i }}], {{ b }}.since) <= $step
                 AND coalesce({{ b }}.support_authority[{{ i }}], {{ b }}.authority) > top
            THEN {{ b }}.support_authority[{{ i }}] ELSE top END)
{%- endmacro %}
