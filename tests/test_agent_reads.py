"""What an agent session may read of its own mind (tomc/api.py): every belief of a chain that
starts with it (`beliefs`), and its own `context_for`, through its FalkorDB user; anything
else is refused."""

from __future__ import annotations

import pytest

from tomc.api import AccessDenied, Session, TomError
from tomc.memory import catalog

STORY = ["agents Maya, Billing, Finance", "rooms chat, ops", "Maya, Billing enter chat",
         "Billing says refund.status = approved", "Finance enters ops",
         "Finance sets refund.status = rejected"]


def test_an_agent_reads_its_own_chains_and_context_and_nothing_else(db):
    catalog.drop(db, "agent_reads")  # a FALKORDB_URL server keeps memories across runs
    with Session.attach("agent_reads", db=db) as live:
        for line in STORY:
            live.apply(line)
        every = [(h.chain, h.key, h.value, h.source) for h in live.beliefs("Finance")]
        assert every == [(("Finance",), "refund.status", "rejected", None)]
        with Session.attach("agent_reads", db=db, as_agent="Maya") as maya:
            assert [(h.key, h.value, h.source, h.since) for h in maya.beliefs("Maya")] == [
                ("refund.status", "approved", "Billing", 2)]
            assert [h.value for h in maya.beliefs(["Maya", "Billing"])] == ["approved"]
            context = maya.context_for("Maya", "Finance")
            assert [(d.key, d.action) for d in context.differences] == [
                ("refund.status", "tell")]
            assert context.to_json() == live.context_for("Maya", "Finance").to_json()
            for refused in (lambda: maya.beliefs("Finance"),
                            lambda: maya.beliefs(["Billing", "Maya"]),
                            lambda: maya.context_for("Finance", "Maya")):
                with pytest.raises(AccessDenied):
                    refused()
            with pytest.raises(TomError) as caught:
                maya.beliefs(["Maya", "Maya"])
            assert caught.value.diagnostics[0].code == "E130"
