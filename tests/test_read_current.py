"""A belief read through a session checks, in the same round trip, that no other writer has
committed since (FalkorEngine.answer_if_current); when one has, the session catches up and
reads again, so it never answers from a stale state."""

from __future__ import annotations

import sys
import time

from conftest import REPO
from tomc.api import Session
from tomc.memory import submit

if str(REPO) not in sys.path:  # `eval` is a folder of the repository, not an installed package
    sys.path.insert(0, str(REPO))

from eval.roundtrips import RoundTrips  # noqa: E402


def test_a_belief_read_is_one_round_trip_and_sees_other_writers(db):
    with Session.attach("read_current", db=db) as first, \
            Session.attach("read_current", db=db) as second:
        first.apply("agents Maya, Billing\nrooms chat")
        first.apply("Maya, Billing enter chat")
        second.refresh()
        trips = RoundTrips()
        with trips.counting():
            assert second.believes("Maya", "refund.status").values == []
        assert trips.count == 1
        first.apply("Billing says refund.status = approved")
        assert second.believes("Maya", "refund.status").values == ["approved"]
        assert second.step == 2
        first.apply("agents Finance")  # declared by the other writer: named in a question
        first.apply("Billing tells Finance refund.status = approved")
        assert second.believes(["Finance", "Billing"], "refund.status").values == ["approved"]
        assert second.ask("expect Finance believes refund.status = approved").passed


def test_an_event_is_one_round_trip_and_learns_whether_an_applier_serves(db):
    """A session's commit also looks whether `tomc serve`'s appliers serve the memory
    (tomc/memory/submit.py `serving_key`), so the next write need not ask in a round
    trip of its own; a look older than `submit.LOOKED_S` is asked again."""
    with Session.attach("write_trips", db=db) as session:
        session.apply("agents Maya, Billing\nrooms chat")
        session.apply("Maya, Billing enter chat")
        trips = RoundTrips()
        with trips.counting():
            session.apply("Billing says refund.status = approved")
        assert trips.count == 1
        time.sleep(submit.LOOKED_S + 0.2)  # the look is too old to trust now
        later = RoundTrips()
        with later.counting():
            session.apply("Billing says refund.status = denied")
        assert later.count == 2  # asked, then committed
