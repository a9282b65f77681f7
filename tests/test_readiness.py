"""Procedures and readiness (docs/language.md, "Procedures and readiness"): the step table,
blocked over unknown, `many` keys, both clocks, on both engines, and every way to ask it
(run --json, eval, the Python API, an agent's session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tomc.api import AccessDenied, Session, TomError
from tomc.cli.main import app
from tomc.dsl.parser import parse
from tomc.memory import catalog
from tomc.lsp.symbols import Symbols
from tomc.readiness import ReadyAnswer

from helpers import run_both

REPO = Path(__file__).resolve().parent.parent
RELEASE = REPO / "scenarios" / "release_freeze.tom"

POLICY = """policy p {
  depth 2
  trust authority
  source bulletin authority 4
  source chat authority 1
  predicate release.needs many

  procedure deploy {
    requires qa.signoff = signed
    requires release.needs = rehearsal
    requires freeze.date
  }
}
"""


def ready(run) -> list[tuple]:
    """Each readiness answer as (verdict, blockers, unknown, each step's status and values)."""
    return [(a.verdict, a.blockers, a.unknown,
             [(s.status, s.values, s.sources, s.authority, s.caveats) for s in a.steps])
            for a in run.answers if isinstance(a, ReadyAnswer)]


def test_the_step_table_on_both_engines(db):
    text = POLICY + """scenario s {
  agents A, B
  ask ready deploy
  claim freeze.date = d1 from bulletin at 2026-01-01 to all
  claim freeze.date = d2 from chat at 2026-01-02 to all
  ask ready deploy for A
  claim release.needs = qa from bulletin to A
  ask ready deploy for A
  claim release.needs = rehearsal from bulletin to A
  claim qa.signoff = signed from bulletin to all
  ask ready deploy for A
  ask ready deploy for B
  ask ready deploy for B > A
  ask ready deploy for A at step 1
}
"""
    on_falkordb, on_reference = run_both(db, text)
    found = ready(on_falkordb)
    assert found == ready(on_reference)
    verdicts = [(v, b, u) for v, b, u, _ in found]
    assert verdicts == [
        ("unknown", [], ["qa.signoff", "release.needs", "freeze.date"]),  # nothing held
        ("unknown", [], ["qa.signoff", "release.needs"]),  # any date will do
        ("blocked", ["release.needs"], ["qa.signoff"]),  # {qa} lacks rehearsal: blocked wins
        ("ready", [], []),  # rehearsal is in {qa, rehearsal}
        ("unknown", [], ["release.needs"]),  # B heard of no requirement
        ("unknown", [], ["release.needs"]),
        ("unknown", [], ["qa.signoff", "release.needs"]),  # knowledge time
    ]
    date = found[1][3][2]
    assert date == ("satisfied", ["d1"], ["bulletin"], 4, ["d2"])  # the rumour: a caveat
    assert found[3][3][1][1] == ["qa", "rehearsal"]


def test_valid_time_and_a_scenario_procedure(db):
    text = POLICY + """scenario s {
  agents A
  procedure freeze_known {
    requires freeze.date = d2
  }
  claim freeze.date = d1 from chat at 2026-01-01 to all
  claim freeze.date = d2 from bulletin at 2026-01-05 to all
  expect ready freeze_known = ready
  expect ready freeze_known for A = blocked on 2026-01-03
  expect ready freeze_known for A blockers = {freeze.date} on 2026-01-03
  expect ready freeze_known = unknown on 2025-12-31
  expect ready freeze_known for A = blocked at step 1
}
"""
    for run in run_both(db, text):
        assert [a.passed for a in run.answers] == [True] * 5


def test_release_freeze_answers_can_we_deploy_now(db):
    """The issue's headline question, on the shipped scenario."""
    for engine in ("falkordb", "reference"):
        with Session.open(RELEASE, engine=engine, db=db) as session:
            answer = session.ready("deploy", for_="Planner")
            assert (answer.verdict, answer.blockers, answer.unknown) == (
                "blocked", ["qa_signoff.status"], [])
            assert answer.shown == "blocked: qa_signoff.status = pending, not signed"
            freeze = answer.steps[2].to_json()
            assert freeze == {"key": "freeze.date", "requires": None, "status": "satisfied",
                              "values": ["2026-10-18"],
                              "sources": ["bulletin_r4", "bulletin_r4 via Scout", "chat via Scout"],
                              "authority": 4, "caveats": ["2026-10-20"]}  # 17: superseded
            assert session.ready("deploy").verdict == "ready"
            assert session.ready("deploy", at_step=10).verdict == "blocked"
            assert session.ready("deploy", on="2026-10-17").verdict == "blocked"
            assert session.ready("deploy", for_=["Scout", "Planner"]).blockers == [
                "qa_signoff.status"]
            with pytest.raises(TomError) as caught:
                session.ready("deplo")
            assert caught.value.diagnostics[0].code == "E170"
            assert caught.value.diagnostics[0].hint == "did you mean `deploy`?"


def test_run_json_and_eval(db, data_dir):
    runner = CliRunner()
    out = runner.invoke(app, ["run", "--json", "--data", str(data_dir), str(RELEASE)])
    assert out.exit_code == 0, out.output
    answers = json.loads(out.output)["scenarios"][0]["answers"]
    asked = [a for a in answers if a.get("ready") == "deploy" and a["kind"] == "ask"]
    assert [(a["chain"], a["verdict"], a["blockers"]) for a in asked] == [
        ([], "blocked", ["qa_signoff.status"]), (["Planner"], "blocked", ["qa_signoff.status"]),
        (["Scout"], "ready", [])]
    out = runner.invoke(app, ["eval", "--data", str(data_dir), str(RELEASE),
                              "ask ready deploy for Planner"])
    assert out.exit_code == 0, out.output
    assert "ready deploy for Planner = blocked: qa_signoff.status = pending" in out.output
    assert "caveat: contested by 2026-10-20" in out.output
    out = runner.invoke(app, ["eval", "--data", str(data_dir), str(RELEASE),
                              "expect ready deploy for Planner = ready"])
    assert out.exit_code == 1 and "actual: blocked" in out.output


def test_an_agent_asks_readiness_only_from_its_own_chains(db, tmp_path):
    policy = tmp_path / "p.tom"
    policy.write_text(POLICY, encoding="utf-8")
    name = "readiness_agent"
    catalog.drop(db, name)
    try:
        with Session.attach(name, db=db, policy=str(policy)) as live:
            live.apply("agents A, B\nclaim qa.signoff = pending from bulletin to A")
            assert live.ready("deploy", for_="A").blockers == ["qa.signoff"]
        with Session.attach(name, db=db, as_agent="A") as agent:
            assert agent.ready("deploy", for_="A").verdict == "blocked"
            assert agent.ready("deploy", for_=["A", "B"]).verdict == "unknown"
            for refused in (lambda: agent.ready("deploy"),
                            lambda: agent.ready("deploy", for_="B"),
                            lambda: agent.ask("ready deploy for B > A")):
                with pytest.raises(AccessDenied):
                    refused()
    finally:
        catalog.drop(db, name)


def test_a_handoff_receipt_tells_which_procedures_it_unblocks(db):
    for engine in ("falkordb", "reference"):
        with Session.open(RELEASE, engine=engine, db=db) as session:
            receipt = session.handoff("Scout", "Planner")
            assert [i.key for i in receipt.included] == ["qa_signoff.status"]
            assert receipt.to_json()["readiness"] == [{
                "procedure": "deploy", "keys": ["qa_signoff.status"], "sender": "ready",
                "receiver_now": "blocked", "receiver_after": "ready"}]
            assert session.handoff("Planner", "Scout").readiness == ()  # sends nothing


def test_the_language_server_finds_a_procedure_from_ready():
    text = POLICY + """scenario s {
  agents A
  procedure local {
    requires k
  }
  ask ready local
  ask ready deploy for A
}
"""
    symbols = Symbols(parse(text), text, "s.tom")
    lines = text.split("\n")
    for name in ("local", "deploy"):
        line = next(i for i, t in enumerate(lines, 1) if t.strip().startswith(f"ask ready {name}"))
        target = symbols.at(line, lines[line - 1].index(name) + 1)
        decl = symbols.definition(target)
        assert (decl.kind, decl.name) == ("procedure", name)
        assert decl.statement == f"procedure {name} {{"
    assert "steps on qa.signoff, release.needs, freeze.date" in symbols.hover(
        symbols.at(line, lines[line - 1].index("deploy") + 1))


def test_ready_at_a_time_is_ready_as_of_the_last_event_by_then(db, tmp_path):
    path = tmp_path / "timed.tom"
    path.write_text("scenario timed {\n  agents A\n  rooms r\n"
                    "  procedure go {\n    requires gate.state = open\n  }\n"
                    "  A enters r at 2026-10-14T09:00\n"
                    "  A sets gate.state = open at 2026-10-14T10:00\n"
                    "  A sets gate.state = shut at 2026-10-15T10:00\n}\n")
    for engine in ("falkordb", "reference"):
        with Session.open(path, engine=engine, db=db) as session:
            assert session.ready("go", at="2026-10-14T09:30").verdict == "unknown"
            assert session.ready("go", at="2026-10-14T12:00+02:00").verdict == "ready"
            assert session.ready("go", for_="A", at="2026-10-16").verdict == "blocked"
