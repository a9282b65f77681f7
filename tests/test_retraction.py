"""Endings and knowledge time by date (docs/language.md, "Endings" and "Time"): what each
statement closes, under which authority, on both engines; what `at TIME` asks; the
diagnostics of times that go back. tests/test_properties.py checks the same on generated
scenarios; scenarios/moved_out.tom is the worked example."""

from __future__ import annotations

import pytest

from helpers import codes, run_both, scenario
from tomc.api import Session

ENGINES = ["falkordb", "reference"]


def shown(db, text: str) -> list[str]:
    """Every answer of `text` as shown; both engines must agree on all of them."""
    engine, reference = run_both(db, text)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    return [a.shown for a in engine.answers]


TIES = """policy p {{
  trust authority
  ties {ties}
  source doc authority 2
}}
scenario s {{
  agents A, B
  claim k.v = one from doc at 2026-03-01
  claim k.v ended from doc at 2026-03-01
  ask truth k.v
  ask A believes k.v
  expect A believes k.v contested by "(ended)"
}}
"""


@pytest.mark.parametrize("ties, held, rivals", [
    ("contested", "one", True), ("newest", "unknown", False), ("first", "one", False)])
def test_an_ending_of_the_same_date_is_a_tie(db, ties, held, rivals):
    answers = shown(db, TIES.format(ties=ties))
    assert answers[:2] == [held, held]
    run, _ = run_both(db, TIES.format(ties=ties))
    assert run.answers[2].passed == rivals


LOWER = """policy p {
  trust authority
  source doc authority 2
  source chat authority 1
}
scenario s {
  agents A, B
  claim k.v = one from doc at 2026-03-01
  claim k.v ended from chat at 2026-03-05
  claim k.v ended from doc at 2026-02-01
  expect truth k.v = one
  expect truth k.v contested by "(ended)"
  claim k.v ended from doc
  expect truth k.v unknown
  expect truth k.v = one at step 3
  expect truth k.v unknown on 2026-03-02
  claim k.v = two from chat
  expect A believes k.v = two
}
"""


def test_an_ending_needs_the_authority_a_value_would(db):
    """A lower authority, or an older report, is recorded as contested; an undated one of
    equal authority closes (valid time: it ends at the beginning of time, so the closed
    value never held); afterwards a lower-authority value is adopted into unknown."""
    engine, reference = run_both(db, LOWER)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [a.query.text for a in engine.failed]


CREDULOUS = """use policy default
scenario s {
  agents A, B, C
  rooms R
  A, B enter R
  A says k.v = one
  B tells C k.v = other
  A retracts k.v
  expect B believes k.v unknown
  expect B > A believes k.v unknown
  expect C believes k.v = other
  expect A believes k.v unknown
  expect B believes k.v = one at step 2
  ask who_knows k.v
  ask false_beliefs depth 2
  ask explain B k.v
  ask common_ground A, B
  ask context_for B talking_to A
  ask plan_announcements k.v by C
  ask handoff B -> C
}
"""


def test_a_retraction_ends_only_what_was_held_on_the_speakers_word(db):
    engine, reference = run_both(db, CREDULOUS)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [a.query.text for a in engine.failed]


MANY = """policy p {
  predicate team.members many
}
scenario s {
  agents A
  claim team.members = x from doc
  claim team.members = y from doc
  claim team.members = x ended from doc
  expect truth team.members = {y}
  claim team.members ended from doc
  expect truth team.members unknown
  expect truth team.members = {x, y} at step 2
}
"""


def test_a_many_key_ends_one_value_or_all(db):
    engine, reference = run_both(db, MANY.replace("from doc", "from A"))
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [a.query.text for a in engine.failed]


TIMES = """use policy default
scenario s {
  agents A, B
  rooms R
  A enters R
  clock 2026-10-14T09:00
  A sets k.v = one
  A sets k.v = two at 2026-10-14T10:00
  A sets k.v = three
  claim k.v = four from A at 2020-01-01 to B
  expect A believes k.v = three at 2026-10-14T10:00
  expect A believes k.v = one at 2026-10-14T09:59
  expect A believes k.v unknown at 2026-10-14T08:00
  expect truth k.v unknown at 2026-10-14
  expect truth k.v = four at 2026-10-15
}
"""


def test_at_time_asks_after_the_last_event_at_or_before_it(db):
    """Events before any stated time count as earlier than every time; a claim's `at` is its
    publication time, not when it arrived (step 5 takes the clock's 10:00)."""
    model = scenario(TIMES)
    assert [e.time for e in model.events] == [None, "2026-10-14T09:00:00",
                                              *["2026-10-14T10:00:00"] * 3]
    assert [q.step for q in model.queries] == [5, 2, 1, 1, 5]
    engine, reference = run_both(db, TIMES)
    assert not engine.failed and not reference.failed, [a.shown for a in engine.answers]


@pytest.mark.parametrize("lines", [
    "clock 2026-10-14\n  clock 2026-10-13",
    "A waits at 2026-10-14T10:00\n  A waits at 2026-10-14T09:00",
    "clock 2026-10-14T10:00\n  A enters R at 2026-10-14T11:00+02:00",
])
def test_times_that_go_back_are_diagnosed(lines):
    text = f"use policy default\nscenario s {{\n  agents A\n  rooms R\n  {lines}\n}}\n"
    assert codes(text) == ["E148"]


def test_times_that_hold_still_or_go_forward_are_fine():
    text = ("use policy default\nscenario s {\n  agents A\n  clock 2026-10-14T10:00\n"
            "  A waits at 2026-10-14T12:00+02:00\n  claim k.v = a from A at 1999-01-01\n"
            "  A waits at 2026-10-14T11:00\n}\n")
    assert codes(text) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_the_api_ends_and_asks_by_time(db, engine):
    with Session.open(policy="default", engine=engine,
                      db=db if engine == "falkordb" else None) as session:
        session.apply("agents A, B\nrooms R\nA, B enter R at 2026-10-14T09:00")
        session.says("A", "k.v", "one")
        session.apply("A waits at 2026-10-14T10:00")
        session.retract("A", "k.v")
        session.claim_ended("A", "j.v")
        assert session.believes("B", "k.v").values == []
        assert session.believes("B", "k.v", at="2026-10-14T09:30").values == ["one"]
        assert session.believes("B", "k.v", at_step=2).values == ["one"]
