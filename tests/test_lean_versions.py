"""What a memory stores per event (issue 34 item 4, docs/storage.md "What each event costs"):
a version holds no copy of its event (text, line, witnesses: read from the graph's `Event`,
sought by the node id the version keeps) and keeps its supporters' steps and authorities only once its
support grows; the agents' views and the event hash keep each event without its default
fields. Answers are those of the layout before, which a memory stored by an older tomc
still has: it opens and answers alike."""

from __future__ import annotations

import json

from tomc.api import Session
from tomc.memory import catalog
from tomc.runtime.keys import memory_key

STORY = ["agents Maya, Billing, Finance", "rooms chat, ops", "Maya, Billing enter chat",
         "Billing says refund.status = approved", "Finance enters ops",
         "Finance sets refund.status = rejected", "Finance enters chat",
         "Finance says refund.status = approved", "claim refund.status = approved from Billing"]
QUESTIONS = ["Maya believes refund.status", "Maya > Billing believes refund.status",
             "Finance believes refund.status at step 6", "truth refund.status",
             "false_beliefs depth 2", "who_knows refund.status"]

# What a version of the layout before stored beside what answers (write.cypher then).
OLDER = ("MATCH (b:V) OPTIONAL MATCH (e:Event) WHERE e.step = b.since "
         "WITH b, collect(e)[0] AS e "
         "SET b.text = e.text, b.line = e.line, b.witnesses = e.witnesses, "
         "b.origin_authority = coalesce(b.origin_authority, b.authority), "
         "b.support_since = coalesce(b.support_since, [x IN b.support | b.since]), "
         "b.support_authority = coalesce(b.support_authority, [x IN b.support | b.authority]) "
         "REMOVE b.event")


def _answers(session) -> list:
    beliefs = [session.believes(chain, "refund.status", at_step=step).to_json()
               for chain in (["Maya"], ["Maya", "Billing"], ["Finance"])
               for step in (4, 6, None)]
    return beliefs + [str(session.ask(q)) for q in QUESTIONS]


def test_a_version_keeps_no_copy_of_its_event_and_answers_with_it(db, fresh):
    name = fresh("lean_versions")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        answer = live.believes("Maya", "refund.status")
        graphs = catalog.memory_graphs(name, live.scenario.agents)
    # Finance's saying of the same value grew the support of the version Billing's made
    (provenance,) = answer.to_json()["provenance"]
    assert (provenance["text"], provenance["line"], sorted(provenance["witnesses"])) == (
        "Billing says refund.status = approved", 4, ["Billing", "Maya"])
    assert answer.support == ["Billing", "Finance"]
    for graph in (graphs.world, *graphs.minds.values()):
        for keys, support in db.graph(graph).query(
                "MATCH (b:V) RETURN keys(b), b.support").result_set:
            assert not {"text", "line", "witnesses"} & set(keys) and "event" in keys
            if len(support) == 1:
                assert not {"support_since", "support_authority", "origin_authority"} & set(keys)
    for raw in db.redis.hvals(memory_key(name, "seen", "Maya")):
        assert "peekers" not in json.loads(raw)  # a field at its default is left out


def test_a_memory_stored_with_versions_of_the_layout_before_answers_alike(db, fresh):
    """Versions carrying their event and support lists whole (an older tomc's): every
    answer is the same, before and after a new event."""
    name = fresh("lean_before")
    with Session.attach(name, db=db) as first:
        first.apply("\n".join(STORY))
        before = _answers(first)
        graphs = catalog.memory_graphs(name, first.scenario.agents)
    for graph in (graphs.world, *graphs.minds.values()):
        db.graph(graph).query(OLDER)
    with Session.attach(name, db=db) as later:
        assert _answers(later) == before
        later.apply("Billing says refund.status = paid")
        assert later.believes("Maya", "refund.status").values == ["paid"]
