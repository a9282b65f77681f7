"""Each statement kind, run on the real FalkorDB and on the reference interpreter."""

from __future__ import annotations

import pytest

from helpers import codes, run_both, values

HEADER = "use policy default\nscenario s {\n  agents A, B, C\n  rooms r, q\n"


def run(db, body: str, policy: str = "default"):
    text = HEADER.replace("default", policy) + body + "\n}\n"
    engine, reference = run_both(db, text)
    assert values(engine) == values(reference)
    return engine


CASES = {
    "enter reveals nothing by default": (
        "A enters r\nin r: k is in box\nB enters r\n"
        "ask A believes k\nask B believes k\nask A > B believes k", ["box", "unknown", "unknown"]),
    "exit leaves the room": (
        "A, B enter r\nB exits r\nin r: k is in box\nask A believes k\nask B believes k",
        ["box", "unknown"]),
    "entering another room leaves the first": (
        "A, B enter r\nB enters q\nin r: k is in box\nask B believes k\nask A > B believes k",
        ["unknown", "unknown"]),
    "state observed by everyone in the room": (
        "A, B enter r\nC enters q\nin r: k is in box\n"
        "ask A > B believes k\nask C believes k\nask truth k", ["box", "unknown", "box"]),
    "move witnessed by the mover's room": (
        "A, B enter r\nin r: k is in box\nB exits r\nA moves k to bag\n"
        "ask A believes k\nask B believes k\nask A > B believes k\nask truth k",
        ["bag", "box", "box", "bag"]),
    "set with no room is seen by the actor alone": (
        "A sets k.s = on\nask A believes k.s\nask B believes k.s\nask truth k.s",
        ["on", "unknown", "on"]),
    "tell: listener, listener > speaker, speaker > listener": (
        "A tells B k.s = on\nask B believes k.s\nask B > A believes k.s\n"
        "ask A > B believes k.s\nask A believes k.s\nask C believes k.s\nask truth k.s",
        ["on", "on", "on", "unknown", "unknown", "unknown"]),
    "says reaches the speaker's room only": (
        "A, B enter r\nC enters q\nA says k.s = on\n"
        "ask B believes k.s\nask C believes k.s\nask B > A believes k.s\nask A believes k.s",
        ["on", "unknown", "on", "unknown"]),
    "announce reaches everyone: common knowledge among listeners": (
        "A announces k.s = on\nask B believes k.s\nask C > B believes k.s\n"
        "ask A > C believes k.s\nask A believes k.s", ["on", "on", "on", "unknown"]),
    "claim to all under credulous trust": (
        "claim k.s = on from A to all\nask A believes k.s\nask B > C believes k.s\n"
        "ask truth k.s", ["on", "on", "on"]),
    "claim in a room": (
        "A, B enter r\nclaim k.s = on from A in r\nask B believes k.s\nask C believes k.s",
        ["on", "unknown"]),
    "claim to named agents": (
        "claim k.s = on from A to B, C\nask B > C believes k.s\nask A believes k.s",
        ["on", "unknown"]),
    "waits and noop change nothing": (
        "A, B enter r\nin r: k is in box\nA waits\nnoop \"A saw a monkey.\"\n"
        "ask B > A believes k\nask B > A believes k at step 2", ["box", "box"]),
    "a peeker sees the next event unseen": (
        "A, B enter r\nC enters q\nC peeks\nin r: k is in box\nin r: k is in bag\n"
        "ask C believes k\nask C > A believes k\nask A > C believes k\nask A > B believes k",
        ["box", "box", "unknown", "bag"]),
    "a distracted agent misses the next event, thought to have seen it": (
        "A, B enter r\nB is distracted\nin r: k is in box\nin r: k.s = on\n"
        "ask B believes k\nask B > A believes k\nask A > B believes k\nask B believes k.s",
        ["unknown", "unknown", "box", "on"]),
    "keys with dots in their parts stay distinct": (
        'A sets "a.b".c = one\nA sets a."b.c" = two\nask A believes "a.b".c\n'
        'ask A believes a."b.c"', ["one", "two"]),
    "a later observation supersedes; the past stays answerable": (
        "A enters r\nin r: k is in box\nA moves k to bag\n"
        "ask A believes k\nask A believes k at step 2\nask A believes k at step 1",
        ["bag", "box", "unknown"]),
}


@pytest.mark.parametrize("name", CASES)
def test_statement_kind(db, name):
    body, expected = CASES[name]
    assert values(run(db, body)) == expected


def test_hitom_policy_enter_reveals_contents_and_trust_follows_exit_order(db):
    body = ("A, B, C enter r\nin r: k is in box\nA exits r\nB moves k to bag\nB exits r\n"
            "C exits r\nA, B, C enter q\n"
            "C tells A k is in tin\n"      # C left r last: A trusts C
            "A tells C k is in cup\n"      # A left r first: C does not trust A, but A > C := cup
            "B enters r\n"                 # entering r reveals where k is now
            "ask A believes k\nask A > C believes k\nask C > A believes k\n"
            "ask C believes k\nask B believes k")
    assert values(run(db, body, "hitom")) == ["tin", "cup", "tin", "bag", "bag"]


def test_hitom_public_claim_per_listener(db):
    body = ("A, B, C enter r\nin r: k is in box\nA exits r\nB exits r\nC exits r\n"
            "B announces k is in bag\n"
            "ask A believes k\nask A > B believes k\nask B > A believes k\n"
            "ask C believes k\nask C > B believes k\nask B > C believes k\nask B believes k")
    assert values(run(db, body, "hitom")) == ["bag", "bag", "bag", "box", "box", "bag", "box"]


def test_peek_at_an_entering_under_hitom_sees_what_it_reveals(db):
    body = ("A enters r\nin r: k is in box\nA exits r\nC peeks\nB enters r\n"
            "ask B believes k\nask C believes k\nask C > B believes k\nask B > C believes k")
    assert values(run(db, body, "hitom")) == ["box", "box", "box", "unknown"]


ROUTED = """policy p {{
  on observe:
    every chain over {sets} adopts
}}
use policy p
scenario s {{
  agents A, B, C
  rooms r, q
  A, B enter r
  C enters q
  C peeks
  B is distracted
  in r: k is in box
  ask C > A believes k
  ask A > C believes k
  ask B believes k
  ask A > B believes k
}}
"""


@pytest.mark.parametrize("sets, expected", [
    ("witnesses", ["box", "unknown", "unknown", "box"]),
    ("witnesses + peekers", ["box", "box", "unknown", "box"]),     # the peeker was noticed
    ("witnesses + distracted", ["box", "unknown", "box", "box"]),  # distraction ignored
])
def test_observe_rules_route_peekers_and_distracted_agents(db, sets, expected):
    engine, reference = run_both(db, ROUTED.format(sets=sets))
    assert values(engine) == values(reference) == expected


def test_support_at_a_past_step_leaves_out_later_corroborations(db):
    body = ("A tells B k.s = on\nC tells B k.s = on\n"
            "expect B believes k.s supported by A at step 1\n"
            "expect B believes k.s supported by A, C")
    engine = run(db, body)
    assert [a.passed for a in engine.answers] == [True, True]


@pytest.mark.parametrize("body", [
    "A enters r\nB is distracted\nB enters r",      # the one who enters is not distracted from it
    "A, B enter r\nB is distracted\nB moves k to box",  # nor is the one who moves
    "B is distracted\nB tells A k.v = 1",           # nor the one who speaks
    "A peeks\nB tells A k.v = 1",                   # a listener does not peek: it hears
    "A peeks\nB announces k.v = 1",                 # every agent hears an announcement
])
def test_a_distracted_agent_cannot_be_the_actor(body):
    text = "scenario s {\n  agents A, B\n  rooms r\n" + "".join(
        f"  {line}\n" for line in body.split("\n")) + "}\n"
    assert codes(text) == ["E176"]
