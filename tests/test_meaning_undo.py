"""Search by meaning after an undo (tomc/runtime/meaning_index.py): a graph embedded up to a
step that an undo takes back (a writer died mid-event) embeds the next event of that step
too; it did not (the mark said that step was done). A real FalkorDB; the embedder is a
deterministic one of three numbers per text (what is embedded is the question here, not how)."""

from __future__ import annotations

from tomc.api import Session
from tomc.engine import recovery
from tomc.runtime.meaning_index import GraphVectors

STORY = ["agents Maya, Billing", "rooms chat", "Maya, Billing enter chat",
         "Billing says refund.status = approved", "Billing says refund.eta = friday"]


class Lengths:
    """Three numbers from a text's length: the same vector for the same text."""

    label = "lengths-3"

    def embed(self, texts):
        return [[1.0, float(len(t) % 7) + 1, 0.5] for t in texts]


def test_an_event_after_an_undo_of_its_step_is_embedded(db, fresh):
    name = fresh("meaning_undo")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        graphs = live._live.engine.graphs
        mind = graphs.mind("Maya")
        GraphVectors(db).sync(Lengths(), mind, live.step)
        revision = int(db.redis.get(graphs.revision_key) or 0)
        assert recovery.undo_event(db, graphs, live.step, revision,
                                   live._live.engine.journal)
    with Session.attach(name, db=db) as live:
        assert live.step == 2  # (agents and rooms lines are no steps)
        live.apply("Billing says refund.owner = ann")
        step = live.step
    GraphVectors(db).sync(Lengths(), mind, step)
    embedded = {tuple(row) for row in db.graph(mind).query(
        "MATCH (m:Meaning) RETURN m.key, m.value").result_set}
    assert ("refund.owner", "ann") in embedded


def test_a_graph_deleted_during_a_sync_is_not_made_again(db, fresh):
    """A write query makes its graph's key: the vectors of a memory dropped while the
    applier's embedding thread syncs it must not bring a graph of it back."""
    import pytest

    from tomc.compiler.templates import render
    from tomc.runtime import meaning_index

    name = fresh("meaning_gone")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        mind = live._live.engine.graphs.mind("Maya")
        step = live.step
    vectors = GraphVectors(db)
    db.redis.delete(mind)  # dropped between the sync's read and its writes
    with pytest.raises(meaning_index._Gone):
        vectors._write(mind, render("meaning_mark.cypher"),
                       {"step": step, "model": "m", "dimension": None})
    vectors.sync(Lengths(), mind, step)
    assert not db.redis.exists(mind)
