"""`trust learned` (docs/semantics.md section 4, "Learned trust") on both engines: the
scenarios of scenarios/learned_trust.tom give the same standings at every step and the same
`explain`, and a live memory, applied an event at a time and attached again by another
session, learns what a run of the same events learns."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import REPO
from tomc.analysis.explain import explain
from tomc.api import Session
from tomc.dsl.checker import check_text
from tomc.dsl.program import Communication
from tomc.memory import catalog
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.reference import ReferenceEngine

FILE = REPO / "scenarios" / "learned_trust.tom"


def scenarios():
    text = FILE.read_text(encoding="utf-8")
    result = check_text(text, str(FILE))
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    return result.scenarios


def sources(scenario) -> list[str]:
    return sorted({*scenario.policy.authorities, *scenario.agents})


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: s.name)
def test_both_engines_give_the_same_standings_and_explanations(db, scenario):
    reference = ReferenceEngine.build(None, scenario)
    engine = FalkorEngine.build(db, scenario)
    try:
        for step in range(len(scenario.events) + 1):
            views = engine.view(step), reference.view(step)
            got = [{s: v.standing(s) for s in sources(scenario)} for v in views]
            assert got[0] == got[1], step
        keys = sorted({e.fact.key for e in scenario.events if isinstance(e, Communication)})
        for key in keys:
            for chain in [("Oncall",), ("Lead", "Oncall")]:
                if not set(chain) <= set(scenario.agents):
                    continue
                found = [explain(engine.view(len(scenario.events)), chain, key).lines(),
                         explain(reference.view(len(scenario.events)), chain, key).lines()]
                assert found[0] == found[1], (chain, key)
    finally:
        engine.drop()
        engine.close()


def test_a_settlement_shows_in_explain(db):
    scenario = next(s for s in scenarios() if s.name == "settled_by_a_claim")
    reference = ReferenceEngine.build(None, scenario)
    view = reference.view(len(scenario.events))
    assert view.standing("wiki").text() == "wiki standing 3 (authority 2, +1 confirmed at step 3)"
    assert view.standing("blog").text() == (
        "blog standing 1 (authority 2, -1 contradicted at step 3)")
    assert reference.view(3).standing("wiki").value == 3  # after step 3: from step 4 on
    assert reference.view(2).standing("wiki").value == 2


POLICY = """policy learned_ops {
  depth 2
  trust learned
  source wiki authority 2
  source blog authority 2
  source vendor authority 5
}
"""


def test_a_live_memory_learns_as_a_run_does(db, tmp_path):
    """Events applied one at a time, and a second session attaching in the middle (the
    engine replays the memory's events for the standings: nothing is stored for them),
    answer as a run of the same events."""
    policy = tmp_path / "learned_ops.tom"
    policy.write_text(POLICY, encoding="utf-8")
    name = "learned_live"
    catalog.drop(db, name)
    try:
        with Session.attach(name, db=db, policy=str(policy)) as first:
            first.apply("agents Oncall, Lead")
            first.apply("claim db.host = alpha from wiki to all")
            first.apply("claim db.host = beta from blog to all")
            first.apply("claim db.host = alpha from vendor to all")
        with Session.attach(name, db=db) as later:
            later.apply("claim db.port = 5432 from wiki to all")
            later.apply("claim db.port = 5433 from blog to all")  # 1 < 3: contested
            assert later.believes("Oncall", "db.port").values == ["5432"]
            assert later.believes("Oncall", "db.port").contested == ["5433"]
            (reason,) = later.explain("Oncall", "db.port").reasons
            assert [s.text() for s in reason.standings] == [
                "wiki standing 3 (authority 2, +1 confirmed at step 3)"]
    finally:
        catalog.drop(db, name)


def test_a_simulation_learns_from_the_events_it_imagines(db):
    """What-if (`simulate`, used by the planning analyses): imagined claims settle disputes
    for the imagined claims after them, on both engines."""
    scenario = next(s for s in scenarios() if s.name == "settled_by_a_claim")
    said = dataclasses.replace(scenario, events=scenario.events[:2], queries=[])
    imagined = scenario.events[2:]
    reference = ReferenceEngine.build(None, said)
    engine = FalkorEngine.build(db, said)
    try:
        found = []
        for run in (engine, reference):
            with run.simulate(imagined) as view:
                found.append(([h.value for h in view.held([("Oncall",)]) if h.key == "db.port"],
                              view.standing("wiki").text()))
        assert found[0] == found[1] == (
            ["5433"], "wiki standing 3 (authority 2, +1 confirmed at step 3)")
    finally:
        engine.drop()
        engine.close()
