// belief(chain, key, step): the values held at that step (knowledge time), read from the
// chain's owner of the key, with the event behind each (recorded in this graph).
MATCH (c:P {agents: $agents})
{% include "owner.cypher" %}
WITH [x IN line WHERE x.depth <= 1 OR $key IN x.owns][0] AS owner
MATCH (owner)-[:HOLDS|HELD]->(b:V)
WHERE b.key = $key AND b.since <= $step AND (b.until IS NULL OR b.until > $step)
OPTIONAL MATCH (rival:Contest)-[:CONTESTS]->(b) WHERE rival.since <= $step
WITH b, collect(rival.value) AS contested
OPTIONAL MATCH (e:Event {step: b.since})
RETURN b.value AS value, b.since AS since, b.source AS source,
       [i IN range(0, size(b.support) - 1) WHERE b.support_since[i] <= $step
        | b.support[i]] AS support,
       b.rule AS rule, contested, e.kind AS kind, e.text AS text, e.line AS line,
       e.witnesses AS witnesses
ORDER BY value
