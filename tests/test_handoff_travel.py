"""What a handoff carries and how endings travel (docs/semantics.md sections 3-4,
docs/language.md "handoff S -> R write"): dates kept, endings sent and listed in the
receipt, ended values read as out of date by the analyses, on both engines.
tests/test_properties.py checks the same on generated scenarios; scenarios/stale_handoff.tom
and scenarios/customer_moved.tom are the worked examples."""

from __future__ import annotations

import pytest

from helpers import codes, run_both
from tomc.dsl.checker import check_text
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse


def agreed(db, text: str):
    """Run `text` on both engines; they must give the same answers, every expect holding."""
    engine, reference = run_both(db, text)
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    assert not engine.failed, [(a.query.text, a.shown) for a in engine.failed]
    return engine


def test_a_handed_value_keeps_its_valid_time(db):
    agreed(db, """policy p {
  source crm authority 1
}
scenario s {
  agents Ana, Ben
  claim plan.tier = gold from crm at 2026-03-01 valid from 2026-04-01 to Ana
  handoff Ana -> Ben write
  expect Ben believes plan.tier = gold
  expect Ben believes plan.tier unknown on 2026-03-15
  expect Ben believes plan.tier = gold on 2026-04-02
}
""")


def test_a_handed_value_keeps_its_publication_time(db):
    # Handed over with its date, the older note arrives last and does not win; the newer
    # one, of equal authority, dominates it: superseded, not a dispute (section 4).
    agreed(db, """policy p {
  trust authority
  source old_note authority 2
  source new_note authority 2
}
scenario s {
  agents Ana, Ben
  claim k.v = old from old_note at 2026-03-01 to Ana
  claim k.v = new from new_note at 2026-03-02 to Ben
  handoff Ana -> Ben write
  expect Ben believes k.v = new
  expect Ben believes k.v contested by {}
}
""")


def test_a_handoff_sends_an_ending_and_the_receipt_lists_it(db):
    engine = agreed(db, """policy p {
  trust authority
  source crm authority 3
}
scenario s {
  agents Intake, Resolver
  claim c.city = Chennai from crm at 2026-03-01 to Intake
  handoff Intake -> Resolver write
  claim c.city ended from crm at 2026-03-05 to Intake
  expect handoff Intake -> Resolver endings = {c.city}
  expect handoff Intake -> Resolver includes = {}
  expect context_for Intake talking_to Resolver first = c.city
  ask handoff Intake -> Resolver
  handoff Intake -> Resolver write
  expect Resolver believes c.city unknown
  expect Resolver believes c.city = Chennai at step 3
  expect Intake > Resolver believes c.city unknown
  expect handoff Intake -> Resolver endings = {}
}
""")
    receipt = next(a for a in engine.answers if a.query.text.startswith("ask handoff"))
    text = str(receipt.to_json())
    assert "ended: c.city = Chennai no longer holds (from crm; authority 3)" in text, text


def test_a_retraction_makes_holders_of_the_retracted_value_out_of_date(db):
    agreed(db, """use policy default
scenario s {
  agents Billing, Maya, Agent, Lead
  rooms chat
  Billing, Maya, Agent enter chat
  Billing says refund.status = approved
  Agent tells Lead refund.status = approved
  Billing retracts refund.status
  expect Lead believes refund.status = approved
  expect Agent believes refund.status unknown
  expect who_knows refund.status out_of_date = {Lead}
  expect who_knows refund.status up_to_date = {Maya, Agent}
  expect who_knows refund.status unknown = {Billing}
  expect false_beliefs depth 1 = {Lead: refund.status}
  expect context_for Agent talking_to Lead differ = {refund.status}
  expect context_for Agent talking_to Lead first = refund.status
}
""")


REPORTED = """policy p {{
  depth {depth}
}}
scenario s {{
  agents A, B, Maya
  {line}
}}
"""


@pytest.mark.parametrize("depth, line, code", [
    (2, "A tells B A believes k.v = 1", "E131"),
    (2, "A tells B B believes k.v = 1", "E131"),
    (2, "A tells B Mia believes k.v = 1", "E101"),
    (1, "A tells B Maya believes k.v = 1", "E130"),
    (2, "expect handoff A -> B hearsay = {B > Maya: k.v}", "E142"),
])
def test_reports_and_hearsay_items_are_checked(depth, line, code):
    text = REPORTED.format(depth=depth, line=line)
    assert code in codes(text)
    rendered = check_text(text, "test.tom").diagnostics[0].render(text)
    assert "test.tom:6:" in rendered and "help:" in rendered


def test_a_report_formats_and_parses_back():
    text = REPORTED.format(depth=2, line="A tells B Maya believes k.v = 1\n  A announces "
                           "Maya believes k.v = 2\n  expect handoff A -> B hearsay = {Maya: k.v}")
    assert codes(text) == []
    formatted = format_file(parse(text, "t.tom"))
    assert "A tells B Maya believes k.v = 1" in formatted
    assert "expect handoff A -> B hearsay = {Maya: k.v}" in formatted
    assert format_file(parse(formatted, "t.tom")) == formatted


def test_a_report_changes_the_models_of_its_subject_only(db):
    agreed(db, """policy p {
  depth 3
}
scenario s {
  agents A, B, Maya
  A tells B Maya believes refund.status = approved
  expect B > Maya believes refund.status = approved
  expect B > A > Maya believes refund.status = approved
  expect A > B > Maya believes refund.status = approved
  expect B > Maya > A believes refund.status unknown
  expect B believes refund.status unknown
  expect Maya believes refund.status unknown
  expect A > Maya believes refund.status unknown
  expect truth refund.status unknown
  expect explain B > Maya refund.status from step 1
}
""")
