"""The Python API (tomc/api.py): live sessions on FalkorDB and on the reference interpreter,
checked statements, typed analyses, and the runnable example (examples/live_session.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, SCENARIOS
from tomc.api import Session, TomError

EVENTS = ["agents Maya, Billing, Finance", "rooms chat, ops",
          "Maya, Billing enter chat", "Billing says refund.status = approved",
          "Finance enters ops", "Finance sets refund.status = rejected",
          "agents Shipping",  # declared late: its mind graph and chains are added then
          "Finance tells Shipping refund.status = rejected"]
QUESTIONS = ["false_beliefs", "false_beliefs depth 2", "who_knows refund.status",
             "handoff Finance -> Maya", "common_ground Finance, Shipping",
             "explain Shipping refund.status", "plan_announcements refund.status by Finance",
             "context_for Finance talking_to Maya", "Maya > Billing believes refund.status",
             "expect truth refund.status = rejected"]


@pytest.fixture(params=["falkordb", "reference"])
def session(request, db):
    with Session.open(db=db, name=f"api_{request.param}", engine=request.param) as live:
        for line in EVENTS:
            live.apply(line)
        yield live


def test_both_engines_answer_every_question_the_same(db):
    answers = {}
    for engine in ("falkordb", "reference"):
        with Session.open(db=db, name="api_same", engine=engine) as live:
            for line in EVENTS:
                live.apply(line)
            answers[engine] = [live.ask(q).to_json() for q in QUESTIONS]
    assert answers["falkordb"] == answers["reference"]


def test_apply_returns_the_events_numbered_from_the_next_step(session):
    (event,) = session.apply("handoff Finance -> Maya write")
    assert (event.step, event.kind, event.speaker) == (6, "handoff", "Finance")
    assert session.believes("Maya", "refund.status").shown == "rejected"
    assert session.believes(["Maya", "Finance"], "refund.status").shown == "rejected"


def test_bad_input_raises_a_diagnostic_and_changes_nothing(session):
    with pytest.raises(TomError) as caught:
        session.apply("Shipping enters chat\nMayaa exits chat")
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.column) == ("E101", 2, 1)
    assert diagnostic.hint == "did you mean `Maya`?"
    assert "<apply>:2:1: error[E101]" in str(caught.value)
    assert session.step == 5
    session.apply("Maya exits chat")  # the rejected text's `enters` did not happen
    with pytest.raises(TomError):
        session.apply("Shipping exits chat")  # E120: Shipping never entered chat


def test_questions_and_events_go_to_their_own_method(session):
    with pytest.raises(ValueError):
        session.apply("ask false_beliefs")
    with pytest.raises(TomError) as caught:
        session.ask("Maya waits")  # read as `ask Maya waits`: not a question
    assert caught.value.diagnostics[0].code == "E001"
    with pytest.raises(ValueError):
        session.ask("expect truth refund.status = rejected\nask false_beliefs")
    with pytest.raises(TomError) as caught:
        session.ask("false_beliefs depth 3")
    assert caught.value.diagnostics[0].code == "E130"


def test_typed_methods_return_the_analyses(session):
    assert [f.item for f in session.false_beliefs().found] == ["Maya: refund.status"]
    assert session.who_knows("refund.status").up_to_date == ["Finance", "Shipping"]
    assert [i.key for i in session.handoff("Finance", "Maya").included] == ["refund.status"]
    assert session.common_ground("Finance", "Shipping").items(None) == ["refund.status"]
    assert session.explain("Shipping", "refund.status").items("path") == ["Finance > Shipping"]
    assert session.plan_announcements("refund.status", "Finance").best == "announce"
    assert 'Correct first: refund.status = "rejected"' in session.context_for(
        "Finance", "Maya").text
    assert session.truth("refund.status").shown == "rejected"
    assert session.ask("expect false_beliefs = {Maya: refund.status}").passed


def test_open_a_scenario_file_and_go_on_from_its_last_step(db):
    with Session.open(SCENARIOS / "sally_anne.tom", db=db) as live:
        assert live.step == 5
        assert live.believes("Sally", "marble").shown == "basket"
        live.apply("Anne tells Sally marble is in box")
        assert live.believes("Sally", "marble").shown == "box"
        assert live.explain("Sally", "marble").items("path") == ["Anne > Sally"]
    with Session.open(SCENARIOS / "sally_anne.tom", db=db) as again:  # graphs replaced
        assert again.believes("Sally", "marble").shown == "basket"


def test_open_reports_errors_in_the_file(tmp_path):
    bad = tmp_path / "bad.tom"
    bad.write_text("scenario s {\n  agents A\n  B enters room\n}\n")
    with pytest.raises(TomError) as caught:
        Session.open(bad, engine="reference")
    assert sorted(d.code for d in caught.value.diagnostics) == ["E101", "E102"]
    with pytest.raises(ValueError):
        Session.open(SCENARIOS / "source_order.tom", engine="reference")  # two scenarios
    with pytest.raises(ValueError):
        Session.open(engine="cypher")
    with pytest.raises(TomError) as caught:
        Session.open(policy="defualt", engine="reference")
    assert caught.value.diagnostics[0].code == "E104"


def test_the_live_session_example_runs():
    """As a user runs it: its own embedded FalkorDB, unless FALKORDB_URL names a server."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, str(REPO / "examples" / "live_session.py")],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "best: announce" in result.stdout
    assert "error[E101]: unknown agent `Finanse`" in result.stdout


@pytest.mark.parametrize("call", [
    lambda s: s.claim("memo", "a.b", 1, at=5),
    lambda s: s.claim_ended("memo", "a.b", at=1),
    lambda s: s.believes("A", "a.b", at="9999-12-31T23:59-14:00"),
])
def test_arguments_of_the_wrong_type_or_range_raise_tom_error(call):
    # Once a pydantic ValidationError or an OverflowError escaped (found by breaking it).
    with Session.open(engine="reference") as session:
        session.apply("agents A\nrooms r")
        with pytest.raises(TomError) as caught:
            call(session)
    assert caught.value.diagnostics[0].code in {"E143", "E140"}


def test_a_policy_that_is_not_text_raises_tom_error():
    with pytest.raises(TomError) as caught:
        Session.open(policy=5, engine="reference")
    assert caught.value.diagnostics[0].code == "E143"
