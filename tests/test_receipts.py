"""Receipts worth reading (issue 36 item 6): a handoff's hearsay corrects or fills the
receiver's model of a third agent and never repeats what that model holds; FactWeft's
release demo (scenarios/release_handoff.tom) gets a receipt of one fact, one caveat (the
rumour) and one line of hearsay, at most half its transcript's tokens, alike on both
engines and in `tomc run --json`. Private means private (item 5): an agent's own note (a
key the policy declares `agent_only`) is never handed on, only excluded as `agent_only`
with its content hidden, in files and memories; no hearsay repeats a private value.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import SCENARIOS
from helpers import run_both
from tomc.analysis.handoff import handed_over, handoff
from tomc.api import Session
from tomc.cli.main import app
from tomc.dsl.checker import check_file
from tomc.runner import run_scenario

DEMO = SCENARIOS / "release_handoff.tom"


def _demo_receipt(engine: str, db) -> dict:
    """The receipt of `ask handoff Planner -> Builder` (before the write) as `tomc run
    --json` prints it."""
    args = ["run", str(DEMO), "--json", "--engine", engine]
    result = CliRunner().invoke(app, args + (["--db", db.url] if engine == "falkordb" else []),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (scenario,) = json.loads(result.output)["scenarios"]
    return next(a["answer"] for a in scenario["answers"]
                if a["text"] == "ask handoff Planner -> Builder")


@pytest.mark.parametrize("engine", ["falkordb", "reference"])
def test_the_release_demo_receipt_sends_what_the_builder_lacks_in_half_the_tokens(db, engine):
    receipt = _demo_receipt(engine, db)
    assert [(i["key"], i["value"], i["sources"], i["authority"])
            for i in receipt["included"]] == [("freeze.date", "2026-10-18", ["bulletin_r4"], 4)]
    # The rumour is the one caveat; the note's date is history, not a rival.
    assert [(c["value"], c["rival"], c["source"], c["authority"])
            for c in receipt["caveats"]] == [("2026-10-18", "2026-10-20", "chat", 1)]
    assert [(e["key"], e["reason"], e["value"]) for e in receipt["excluded"]] == [
        ("freeze.date", "contested", "2026-10-20"), ("freeze.date", "superseded", "2026-10-17"),
        ("qa_signoff.status", "known", "pending"), ("standup.blocker", "private", None),
        ("standup.note", "agent_only", None)]
    # The Builder thinks QA missed the bulletin too (wrong: sent); it saw QA hear the QA
    # status (held: not sent).
    assert [(h["about"], h["key"], h["value"]) for h in receipt["hearsay"]] == [
        ("QA", "freeze.date", "2026-10-18")]
    assert "flaky_e2e_suite" not in json.dumps(receipt)
    assert "quiet" not in json.dumps(receipt)
    assert receipt["size"]["lines"] == 3
    tokens = receipt["tokens"]
    assert 2 * tokens["handoff"] <= tokens["transcript"], tokens


def test_the_release_demo_answers_alike_on_both_engines(db):
    (scenario,) = check_file(DEMO).scenarios
    engine, reference = run_scenario(scenario, "falkordb", db), run_scenario(scenario, "reference")
    assert not engine.failed and not reference.failed
    for step in (6, 7):
        a, b = (handoff(run.view(step), "Planner", "Builder") for run in (engine, reference))
        assert a.to_json() == b.to_json()


POLICY = """policy p {
  depth 2
  trust authority
  source crm authority 3
  predicate plan.note one agent_only
}
use policy p
scenario s {
  agents S, R, X
  rooms office
"""


def _hearsay(db, body: str) -> list[tuple[str, str, str]]:
    """What `handoff S -> R` sends as hearsay after `body`, the same on both engines."""
    seen = set()
    for run in run_both(db, POLICY + body + "}\n"):
        receipt = handoff(run.view(len(run.scenario.events)), "S", "R")
        seen.add(tuple((about, h.key, h.value) for about, h in receipt.hearsay))
    (hearsay,) = seen
    return list(hearsay)


def test_hearsay_fills_a_model_the_receiver_lacks(db):
    # R was not in the office when X learnt the code: R's model of X lacks it.
    body = "  S, X enter office\n  in office: door.code = 4411\n"
    assert _hearsay(db, body) == [("X", "door.code", "4411")]


def test_hearsay_never_repeats_what_the_receiver_saw_the_agent_hear(db):
    body = "  claim door.code = 4411 from crm to all\n"
    assert _hearsay(db, body) == []


def test_hearsay_sent_once_is_not_sent_again(db):
    body = "  S, X enter office\n  in office: door.code = 4411\n  handoff S -> R write\n"
    assert _hearsay(db, body) == []
    # A later change of X's model is news again.
    body += "  in office: door.code = 5522\n"
    assert _hearsay(db, body) == [("X", "door.code", "5522")]


def test_an_own_note_is_never_handed_on_and_its_content_is_hidden(db):
    body = ("  S, X enter office\n  S sets plan.note = sell_early\n"
            "  in office: plan.note = hold\n  S sets plan.note = sell_late\n"
            "  claim door.code = 4411 from crm to S\n")
    for run in run_both(db, POLICY + body + "}\n"):
        view = run.view(len(run.scenario.events))
        receipt = handoff(view, "S", "R")
        assert [(e.key, e.reason, e.value) for e in receipt.excluded] == [
            ("plan.note", "agent_only", None)] * 3
        assert [i.key for i in receipt.included] == ["door.code"]
        assert receipt.hearsay == ()  # X's note (hold) is X's own too
        shown = "\n".join(receipt.lines()) + json.dumps(receipt.to_json())
        assert not any(v in shown for v in ("sell_early", "sell_late", "hold"))
        assert all(s.key != "plan.note" for s in handed_over(view, "S", "R", 0))


def test_no_hearsay_repeats_a_value_the_receipt_excludes_as_private(db):
    # X told S the code in private; S then saw Y learn it in the office R was not in.
    body = ("  X tells S door.code = 4411\n  S, Y enter office\n"
            "  in office: door.code = 4411\n")
    text = POLICY.replace("agents S, R, X", "agents S, R, X, Y") + body + "}\n"
    for run in run_both(db, text):
        receipt = handoff(run.view(3), "S", "R")
        assert [(e.key, e.reason, e.value) for e in receipt.excluded] == [
            ("door.code", "private", None)]
        assert receipt.hearsay == () and receipt.included == []


def test_a_memory_keeps_own_notes_out_of_handoffs(db, fresh, tmp_path):
    policy = tmp_path / "notes.tom"
    policy.write_text(POLICY.split("use policy")[0], encoding="utf-8")
    name = fresh("own_notes")
    with Session.attach(name, db=db, policy=str(policy)) as live:
        live.apply("agents S, R\nS sets plan.note = sell_early\n"
                   "claim door.code = 4411 from crm to S")
        before = live.handoff("S", "R")
        assert [(e.key, e.reason, e.value) for e in before.excluded] == [
            ("plan.note", "agent_only", None)]
        live.handoff_write("S", "R")
        assert live.believes("R", "plan.note").values == []
        assert live.believes("R", "door.code").values == ["4411"]


def test_hover_on_an_agent_only_key_says_it_is_an_own_note():
    from tomc.dsl.parser import parse
    from tomc.lsp.symbols import Symbols

    text = POLICY + "  S sets plan.note = x\n}\n"
    index = Symbols(parse(text), text, "notes.tom")
    line = text.splitlines().index("  predicate plan.note one agent_only") + 1
    hover = index.hover(index.at(line, 13))
    assert "cardinality one, each agent's own note (agent_only)" in hover, hover
