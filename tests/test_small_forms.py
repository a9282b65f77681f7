"""Small forms of issue 21 (docs/language.md): `expect ready ... at step N = ...` with the
time before `=` as `ask ready` writes it, `contested by {}` (uncontested), and an `ask ...
on D` printed with its date; on both engines."""

from __future__ import annotations

from helpers import run_both
from tomc.cli.report import render_run
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse

TEXT = """policy p {
  trust authority
  source doc authority 2
  source chat authority 1
  procedure deploy {
    requires qa.signoff = signed
  }
}
scenario s {
  agents A, B
  A tells B qa.signoff = signed
  expect ready deploy for B at step 1 = ready
  expect ready deploy at step 0 = unknown
  expect ready deploy for B at step 0 blockers = {}
  expect B believes qa.signoff contested by {}
  claim k.v = one from doc at 2026-03-02 to B
  claim k.v = two from chat at 2026-03-03 to B
  expect B believes k.v contested by {two}
  expect B believes k.v contested by two
  ask B believes qa.signoff on 2026-01-01
}
"""


def test_the_small_forms_hold_on_both_engines(db):
    engine, reference = run_both(db, TEXT)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [a.query.text for a in engine.failed]
    assert "ask  B believes qa.signoff on 2026-01-01 = signed" in render_run(engine)


def test_the_small_forms_format_to_one_canonical_text():
    formatted = format_file(parse(TEXT, "t.tom"))
    assert "expect ready deploy for B = ready at step 1" in formatted
    assert "contested by {}" in formatted
    assert format_file(parse(formatted, "t.tom")) == formatted
