"""Times are instants (docs/language.md "Keys and values"): a date is its midnight, a time
without a zone is UTC, zones are converted; and a successor valid from before the value it
supersedes leaves that value an empty valid interval, never an inverted one."""

from __future__ import annotations

import pytest

from helpers import scenario
from tomc.dsl.checker import parse_time
from tomc.runner import run_scenario


@pytest.mark.parametrize("text, instant", [
    ("2026-03-01", "2026-03-01T00:00:00"),
    ("2026-03-01T00:00", "2026-03-01T00:00:00"),
    ("2026-03-01T02:00+02:00", "2026-03-01T00:00:00"),
    ("2026-02-28T23:30Z", "2026-02-28T23:30:00"),
    ("2026-02-28T23:59:59-01:00", "2026-03-01T00:59:59"),
    ("2026-02-30", None),
])
def test_times_are_one_canonical_instant(text, instant):
    assert parse_time(text) == instant


TEXT = """use policy default
scenario times {
  agents A
  claim k.s = one from A at 2026-03-01 valid from 2026-03-01
  claim k.s = two from A at 2026-03-01T00:00 valid from 2026-03-01T02:00+02:00
  expect truth k.s = two on 2026-03-01
  expect truth k.s unknown on 2026-02-28T23:59
  claim k.s = three from A valid from 2026-01-01
  expect truth k.s = three on 2026-02-01
  expect truth k.s = three on 2026-03-05
  expect truth k.s = two at step 2
}
"""


@pytest.mark.parametrize("engine", ["falkordb", "reference"])
def test_equal_instants_and_earlier_successors(db, engine):
    run = run_scenario(scenario(TEXT), engine, db if engine == "falkordb" else None)
    assert [a.passed for a in run.answers] == [True] * 5, [a.shown for a in run.answers]


TIE = """policy p {{
  trust authority
  {ties}
  source memo authority 1
  source note authority 1
}}
use policy p
scenario tie {{
  agents A
  claim k.s = one from memo at 2026-03-01
  claim k.s = two from note at 2026-03-01T00:00
  ask truth k.s
}}
"""


@pytest.mark.parametrize("ties, value, contested", [
    ("", ["one"], ["two"]), ("ties contested", ["one"], ["two"]),
    # `ties newest`: a dated supersede keeps the loser contested (semantics.md section 4,
    # "Arrival order"); `ties first` drops it without a trace.
    ("ties newest", ["two"], ["one"]), ("ties first", ["one"], []),
])
@pytest.mark.parametrize("engine", ["falkordb", "reference"])
def test_the_policy_decides_ties_of_authority_and_date(db, engine, ties, value, contested):
    run = run_scenario(scenario(TIE.format(ties=ties)), engine,
                       db if engine == "falkordb" else None)
    (answer,) = run.answers
    assert (answer.values, answer.contested) == (value, contested)
