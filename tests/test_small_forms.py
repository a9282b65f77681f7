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


REVEAL = """policy see {
  on enter:
    reveal contents except status, weight
}
scenario s {
  agents A, B
  rooms kitchen
  A enters kitchen
  A moves lettuce to box
  in kitchen: box.status = locked
  in kitchen: box.colour = red
  B enters kitchen
  expect B believes lettuce is in box
  expect B believes box.colour = red
  expect B believes box.status unknown
  expect A believes box.status = locked
}
"""


def test_entering_reveals_only_visible_properties_on_both_engines(db):
    engine, reference = run_both(db, REVEAL)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [a.query.text for a in engine.failed]
    formatted = format_file(parse(REVEAL, "t.tom"))
    assert "reveal contents except status, weight" in formatted


def test_hiding_with_reveal_nothing_is_e151():
    from helpers import codes
    assert codes("policy p {\n  on enter:\n    reveal nothing except status\n}\n") == ["E151"]
