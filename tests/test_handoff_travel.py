"""What a handoff carries and how endings travel (docs/semantics.md sections 3-4,
docs/language.md "handoff S -> R write"): dates kept, endings sent and listed in the
receipt, ended values read as out of date by the analyses, on both engines.
tests/test_properties.py checks the same on generated scenarios; scenarios/stale_handoff.tom
and scenarios/customer_moved.tom are the worked examples."""

from __future__ import annotations

from helpers import run_both


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
  expect Ben believes k.v contested by old
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
