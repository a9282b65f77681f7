// Search (docs/language.md, "Search"): the versions of this graph whose words match
// $query (prefix terms, tomc/search_text.py) held by $step, each with every chain that
// stores it (HOLDS: current; HELD: closed; never one closed where it began), found through
// the full-text index on V.words. Support and authority as of $step, as held_versions.cypher.
{%- from "support.cypher" import support_at, authority_at %}
CALL db.idx.fulltext.queryNodes('V', $query) YIELD node
WITH node WHERE node.since <= $step AND (node.until IS NULL OR node.until > node.since)
MATCH (p:P)-[:HOLDS|HELD]->(node)
RETURN p.agents AS chain, node.key AS key, node.value AS value, node.since AS since,
       CASE WHEN node.until IS NOT NULL AND node.until <= $step THEN node.until END AS until,
       node.kind AS kind, node.rule AS rule, node.source AS source,
       {{ support_at("node") }} AS support,
       {{ authority_at("node") }} AS authority
