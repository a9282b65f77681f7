"""A live session with tomc's Python API: the refund story, one event at a time, with the
questions a supervisor or an agent asks between events.

Run it from the repository root:

    python examples/live_session.py

It uses the FalkorDB server named by $FALKORDB_URL, or else starts an embedded FalkorDB in
a temporary folder and stops it at the end. The checks (`assert`) are what the text says;
CI runs this file (tests/test_api.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tomc.api import Session, TomError


def show(title: str, lines: list[str]) -> None:
    print(f"\n== {title}")
    for line in lines:
        print(f"   {line}")


def main() -> None:
    with tempfile.TemporaryDirectory() as data, \
            Session.open(policy="default", name="live_refund", data_dir=Path(data)) as session:
        # Declarations and events are .tom lines, checked against the scenario so far.
        session.apply("agents Maya, Billing, Finance, Shipping, Escalation")
        session.apply("rooms chat, ops_internal")
        session.apply("Maya, Billing enter chat")
        session.apply("Billing says refund_4411.status = approved")
        session.apply("Finance, Escalation enter ops_internal")
        (event,) = session.apply("Finance sets refund_4411.status = rejected")
        print(f"step {event.step}: {event.text}")

        # A typo is a diagnostic, as `tomc check` prints it, and changes nothing.
        try:
            session.apply("Finanse sets refund_4411.status = approved")
        except TomError as err:
            print(err)
            assert err.diagnostics[0].code == "E101"
        assert session.step == 4

        # Who is out of date, and about what: Maya missed the rejection.
        wrong = session.false_beliefs(depth=1)
        show("false beliefs, depth 1", wrong.lines())
        assert [f.item for f in wrong.found] == ["Maya: refund_4411.status"]
        status = session.who_knows("refund_4411.status")
        show("who knows refund_4411.status", status.lines())
        assert status.unknown == ["Billing", "Shipping"]

        # Private messages or one announcement? Both are simulated on copies of the graphs.
        plan = session.plan_announcements("refund_4411.status", "Finance")
        show("plan_announcements refund_4411.status by Finance", plan.lines())
        assert plan.best == "announce"

        # Escalation saw the rejection; Shipping did not. Hand the case over, with a receipt.
        session.apply("Finance tells Escalation refund_4411.reason = \"fraud check\"")
        show("context for Escalation talking to Shipping",
             session.context_for("Escalation", "Shipping").lines())
        receipt = session.handoff_write("Escalation", "Shipping")
        show("handoff Escalation -> Shipping (sent)", receipt.lines())
        assert [i.key for i in receipt.included] == ["refund_4411.status"]
        assert any(e.reason == "private" and e.value is None for e in receipt.excluded)
        assert session.believes("Shipping", "refund_4411.status").shown == "rejected"

        # Why does Shipping believe it? The event, its witnesses, and who told whom.
        show("explain Shipping refund_4411.status",
             session.explain("Shipping", "refund_4411.status").lines())

        # Any .tom question works too, expectations included.
        check = session.ask("expect common_ground Escalation, Shipping = {refund_4411.status}")
        print(f"\n{check.query.text}: {'holds' if check.passed else 'does not hold'}")
        assert check.passed


if __name__ == "__main__":
    main()
