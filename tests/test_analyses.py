"""Each analysis (tomc/analysis/) on small scenarios, run on FalkorDB and on the reference
interpreter: both engines must give the same answer, and the answer is the one written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import SCENARIOS
from helpers import codes, run_both, scenario
from tomc.analysis.announcements import plan_announcements
from tomc.analysis.handoff import estimate_tokens
from tomc.cli.main import app
from tomc.compiler.lower import compile_scenario
from tomc.compiler.plan import graph_names
from tomc.compiler.reads import Bindings
from tomc.runtime import executor as executor_module
from tomc.runtime.forks import FORK_PREFIX
from tomc.engine.falkordb import FalkorEngine

HEADER = "use policy {policy}\nscenario s {{\n  agents A, B, C\n  rooms r, q\n"
AUTHORITY = """policy p {
  depth 2
  trust authority
  source memo authority 1
  source bulletin authority 4
  predicate tags.all many
}
"""


def run(db, body: str, policy: str = "default"):
    """The engine's run of `body` (events and queries) after HEADER; the reference must
    give the same answers."""
    head = HEADER.format(policy=policy)
    if policy == "p":
        head = AUTHORITY + head
    engine, reference = run_both(db, head + body + "\n}\n")
    assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
    return engine


def results(db, body: str, policy: str = "default") -> list:
    return [a.result for a in run(db, body, policy).answers]


def passed(db, body: str, policy: str = "default") -> list:
    return [a.passed for a in run(db, body, policy).answers]


SALLY = "A, B enter r\nin r: k is in box\nB exits r\nA moves k to bag\n"


# ---------------------------------------------------------------- false_beliefs


def test_false_beliefs_depth_1_with_the_event_missed(db):
    (found,) = results(db, SALLY + "ask false_beliefs")
    (wrong,) = found.found
    assert (wrong.chain, wrong.key, wrong.held, wrong.actual) == (("B",), "k.location",
                                                                  ("box",), ("bag",))
    assert [(e.step, e.text, e.witnesses) for e in wrong.missed] == [
        (4, "A moves k to bag", ("A",))]


def test_false_beliefs_depth_2_compares_a_chain_with_the_perspective_it_models(db):
    body = SALLY + ("expect false_beliefs depth 2 = {B > A: k.location}\n"
                    "ask false_beliefs depth 2")
    check, (found,) = passed(db, body)[0], results(db, body)[1:]
    assert check
    assert found.found[0].missed[0].step == 4  # what A saw and B did not


def test_not_knowing_is_not_a_false_belief(db):
    body = ("A announces x.s = 1\n"     # speech: the truth stays unknown; A itself holds nothing
            "A tells B y.s = 2\n"       # B > A = 2, but A holds nothing: not compared
            "expect false_beliefs = {}\nexpect false_beliefs depth 2 = {}")
    assert passed(db, body) == [True, True]


def test_false_beliefs_of_a_many_key_compare_the_sets(db):
    body = ("claim tags.all = red from bulletin to all\n"
            "claim tags.all = blue from bulletin to A\n"
            "expect false_beliefs = {B: tags.all, C: tags.all}\n"
            "expect who_knows tags.all up_to_date = {A}")
    assert passed(db, body, "p") == [True, True]


def test_false_beliefs_at_depth_3(db):
    body = ("A, B, C enter r\nin r: k is in box\nC exits r\nA moves k to bag\n"
            # C saw neither A nor B see the move: C > A > B still says box, A > B says bag.
            "expect false_beliefs depth 3 = {C > A > B: k.location, C > B > A: k.location}\n"
            "expect false_beliefs depth 2 = {C > A: k.location, C > B: k.location}")
    assert passed(db, body, "hitom") == [True, True]
    assert codes(HEADER.format(policy="default") + "ask false_beliefs depth 3\n}\n") == ["E130"]


# ---------------------------------------------------------------- who_knows


def test_who_knows_a_subset_of_a_many_key_is_incomplete_not_out_of_date(db):
    body = ("claim tags.all = red from bulletin to all\n"
            "claim tags.all = blue from bulletin to A, B\n"
            "claim tags.all = green from bulletin to A\n"
            "B tells C tags.all = pink\n"  # C holds red and pink: pink is wrong
            "expect who_knows tags.all up_to_date = {A}\n"
            "expect who_knows tags.all incomplete = {B}\n"
            "expect who_knows tags.all out_of_date = {C}")
    assert passed(db, body, "p") == [True, True, True]


def test_who_knows_sorts_every_agent(db):
    (found,) = results(db, SALLY + "A announces z.s = 1\nask who_knows k\n")
    assert (found.truth, found.up_to_date, [h.agent for h in found.out_of_date],
            found.unknown) == (("bag",), ["A"], ["B"], ["C"])
    assert found.out_of_date[0].values == ("box",)
    body = "A announces z.s = 1\nexpect who_knows z.s unverified = {B, C}\n" \
           "expect who_knows z.s unknown = {A}\nexpect who_knows z.s up_to_date = {}"
    assert passed(db, body) == [True, True, True]


# ---------------------------------------------------------------- handoff


def test_handoff_includes_what_the_model_lacks_and_explains_the_rest(db):
    body = ("A, B enter r\nin r: k.s = one\n"        # both saw it: known
            "C tells A p.s = secret\n"               # private: not sent, not shown
            "B exits r\n"
            "A sets t.s = old\nA sets t.s = new\n"   # B saw neither: old superseded, new sent
            "ask handoff A -> B")
    (receipt,) = results(db, body)
    assert [(i.key, i.value, i.sources) for i in receipt.included] == [("t.s", "new", ())]
    assert [(e.key, e.reason, e.value) for e in receipt.excluded] == [
        ("k.s", "known", "one"), ("p.s", "private", None), ("t.s", "superseded", "old")]
    assert receipt.message == "t.s = new"
    assert receipt.tokens == estimate_tokens("t.s = new") == 5
    assert receipt.transcript_tokens > receipt.tokens
    assert "secret" not in json.dumps(receipt.to_json())
    (together,) = results(db, body.replace("B exits r\n", ""))  # B saw t.s change too
    assert together.included == []


def test_handoff_caveats_and_contested_rivals(db):
    body = ("claim d.s = 18 from bulletin to all\n"
            "claim d.s = 20 from memo to A\n"        # authority 1 < 4: contested at A
            "C tells A d.s = 21\n"                   # a private rival: hidden
            "A tells B d.s = 18\nB tells A d.s = 17\n"   # A > B := 17 (B's own word)
            "expect handoff A -> B includes = {d.s}\n"
            "expect handoff A -> B caveats = {d.s}\n"
            "expect handoff A -> B excludes = {d.s: contested, d.s: private}\n"
            "ask handoff A -> B")
    *checks, receipt = run(db, body, "p").answers
    assert [c.passed for c in checks] == [True, True, True]
    included = receipt.result.included[0]
    assert (included.value, included.sources, included.authority) == ("18", ("bulletin",), 4)
    # B's 17 and C's 21 came in private tells: excluded as private, not shown as caveats.
    assert [c.rival.value for c in receipt.result.caveats] == ["20"]
    assert "21" not in json.dumps(receipt.to_json())


def test_handoff_write_sends_the_included_facts_as_a_private_message(db):
    body = ("A, B enter r\nin r: k.s = one\nB exits r\nA sets k.s = two\nA sets m.s = x\n"
            "C tells A p.s = secret\n"
            "handoff A -> B write\n"
            "expect B believes k.s = two\nexpect B believes m.s = x\n"
            "expect B believes p.s unknown\nexpect A > B believes k.s = two\n"
            "expect B > A believes m.s = x\nexpect C believes k.s unknown\n"
            "expect handoff A -> B includes = {}\n"
            "expect explain B k.s path = A > B\nexpect explain B k.s from step 7")
    engine = run(db, body)
    assert all(a.passed for a in engine.answers), [a.query.text for a in engine.failed]
    told = db.graph(graph_names("s", []).world).query(
        "MATCH (a)-[t:TOLD]->(b) WHERE t.step = 7 RETURN a.name, b.name, t.key, t.value "
        "ORDER BY t.key").result_set
    assert told == [["A", "B", "k.s", "two"], ["A", "B", "m.s", "x"]]


def test_handoff_write_keeps_the_original_sources_authority_and_caveats(db):
    # A holds 18 from the bulletin (4), the memo's 20 (1) contested against it; B has heard
    # nothing. After the handoff B holds 18 supported by `bulletin via A` with authority 4,
    # and 20 is contested against it, from `memo via A`: B can tell the bulletin from a
    # rumour. Handed on again, the sources go `via A via B`.
    body = ("claim d.s = 18 from bulletin to A\n"
            "claim d.s = 20 from memo to A\n"
            "A sets k.s = seen\n"                      # observed: A is the source
            "handoff A -> B write\n"
            "expect B believes d.s = 18\n"
            "expect B believes d.s supported by bulletin via A\n"
            "expect B believes d.s contested by 20\n"
            "expect B believes k.s supported by A\n"
            "claim d.s = 19 from memo to B\n"          # memo (1) < bulletin (4): contested
            "expect B believes d.s = 18\n"
            "handoff B -> C write\n"
            "expect C believes d.s supported by bulletin via A via B\n"
            "expect C believes d.s contested by 19, 20\n"
            "ask explain B d.s")
    engine = run(db, body, "p")
    *checks, explained = engine.answers
    assert all(a.passed for a in checks), [a.query.text for a in engine.failed]
    held = explained.result.reasons[0].belief
    assert (held.support, held.authority) == (("bulletin via A",), 4)
    assert [(r.value, r.source, r.authority) for r in held.rivals] == [
        ("20", "memo via A", 1), ("19", "memo", 1)]


def test_handoff_receipt_counts_and_shows_what_is_sent(db):
    body = ("claim d.s = 18 from bulletin to A\nclaim d.s = 20 from memo to A\n"
            "A sets k.s = seen\nask handoff A -> B")
    (receipt,) = results(db, body, "p")
    assert receipt.message == ("d.s = 18 (from bulletin; authority 4)\nk.s = seen\n"
                               "caveat: memo claims d.s = 20 (authority 1)")
    assert receipt.size == 3 and receipt.to_json()["size"] == {
        "lines": 3, "facts": 2, "caveats": 1, "endings": 0, "hearsay": 0}


def test_support_via_an_agent_must_name_an_agent():
    text = HEADER.format(policy="default") + "  expect A believes k supported by x via Zed\n}\n"
    assert codes(text) == ["E101"]


def test_handoff_write_with_nothing_to_send_is_recorded_and_changes_nothing(db):
    body = ("A, B enter r\nin r: k.s = one\nhandoff A -> B write\n"
            "expect explain B k.s from step 2\nexpect B > A believes k.s = one")
    assert passed(db, body) == [True, True]


def test_handoff_write_relays_what_was_handed_over(db):
    body = ("A sets k.s = one\nhandoff A -> B write\nhandoff B -> C write\n"
            "expect C believes k.s = one\n"
            "expect explain C k.s path = A > B > C")
    assert passed(db, body) == [True, True]


def test_handoff_write_under_exit_order_trust_reaches_no_believer(db):
    body = ("A sets k.s = one\nhandoff A -> B write\n"
            "expect B believes k.s unknown\nexpect A > B believes k.s = one")
    assert passed(db, body, "hitom") == [True, True]


def test_handoff_checks():
    text = HEADER.format(policy="default") + "  handoff A -> A write\n  ask handoff A -> Bb\n}\n"
    assert codes(text) == ["E131", "E101"]
    shallow = "policy p {\n  depth 1\n}\n" + HEADER.format(policy="p") + \
        "  handoff A -> B write\n  ask common_ground A, B\n  ask context_for A talking_to B\n}\n"
    assert codes(shallow) == ["E130", "E130", "E130"]


def test_estimate_tokens_counts_words_and_punctuation():
    assert estimate_tokens("") == 0
    assert estimate_tokens('Maya, Billing enter chat') == 5
    assert estimate_tokens('claim freeze.date = "2026-10-18"') == 12


# ---------------------------------------------------------------- common_ground


def test_common_ground_needs_all_four_perspectives(db):
    body = ("A, B enter r\nin r: k.s = one\n"        # all four: common ground
            "A tells B m.s = x\n"                    # B > A = x, A holds nothing: not
            "expect common_ground A, B = {k.s}\nexpect common_ground A, C = {}")
    assert passed(db, body) == [True, True]


# ---------------------------------------------------------------- explain


def test_explain_an_observed_belief(db):
    (found,) = results(db, SALLY + "ask explain A k")
    (reason,) = found.reasons
    assert (reason.belief.value, reason.event.step, reason.event.witnesses) == ("bag", 4, ("A",))
    assert reason.path.agents == ("A",) and reason.path.steps == ()
    assert (reason.replaced.value, reason.replaced.since) == ("box", 2)


def test_explain_says_a_peeker_overheard_or_watched_the_value_and_at_which_event(db):
    body = ("A, B enter r\nC enters q\nC peeks\nA tells B k.s = v\nC peeks\n"
            "A sets k.t = w\nask explain C k.s\nask explain C > B k.s\nask explain B k.s\n"
            "ask explain C k.t")
    overheard, second_order, told, watched = results(db, body)
    assert overheard.lines()[-1] == ("  who told whom: nobody: C overheard it, peeking, at "
                                     "step 4: A tells B k.s = v")
    assert overheard.to_json()["values"][0]["peeked"] == {"agent": "C", "step": 4,
                                                          "how": "overheard"}
    assert overheard.reasons[0].path.agents == ("C",)  # `expect explain ... path` as before
    assert second_order.reasons[0].peeked == overheard.reasons[0].peeked
    assert told.reasons[0].peeked is None and told.lines()[-1].endswith("A > B (step 4)")
    assert watched.lines()[-1] == ("  who told whom: nobody: C watched it unseen, peeking, "
                                   "at step 6: A sets k.t = w")


def test_explain_follows_first_hearings_back_while_the_steps_go_back(db):
    body = ("A sets k.s = v\nA tells B k.s = v\nB tells C k.s = v\nC tells A k.s = v\n"
            "C tells A k.s = w\nC tells A k.s = v\n"   # A heard v first at 4: after it told B
            "ask explain C k.s\nask explain B > C k.s")
    found, second_order = results(db, body)
    assert found.reasons[0].path.agents == ("A", "B", "C")
    assert found.reasons[0].path.steps == (2, 3)
    assert second_order.reasons[0].path.text == "B"  # B > C came with B's own tell


def test_explain_stays_fast_however_often_a_value_is_repeated(db):
    # Every agent announces the same value again and again: all the TOLD edges together hold
    # a vast number of paths, but each agent has one first hearing.
    body = "\n".join(f"{'ABC'[i % 3]} announces k.s = v" for i in range(30))
    (found,) = results(db, body + "\nask explain B k.s")
    assert found.reasons[0].path.agents == ("A", "B")  # B first heard it from A, at step 1


def test_explain_lists_supporting_and_contesting_sources(db):
    body = ("claim d.s = 18 from bulletin to all\nclaim d.s = 18 from memo to all\n"
            "claim d.s = 17 from memo to all\nask explain A d.s")
    (found,) = results(db, body, "p")
    belief = found.reasons[0].belief
    assert belief.support == ("bulletin", "memo") and belief.authority == 4
    assert [(r.value, r.source, r.step) for r in belief.rivals] == [("17", "memo", 3)]


def test_explain_expectation_checks():
    text = HEADER.format(policy="default") + \
        "  expect explain A k path = A > B > A\n  expect explain A k from step 3\n}\n"
    assert codes(text) == ["E131", "E140"]


# ---------------------------------------------------------------- plan_announcements


def test_plan_announcements_compares_private_tells_with_one_announcement(db):
    body = (SALLY + "C enters q\nin q: k is in tin\n"   # truth tin; A bag, B box, C tin
            "ask plan_announcements k by C")
    (plan,) = results(db, body)
    assert plan.values == ("tin",) and plan.misinformed == ["A", "B"]
    private, announce = plan.plans
    assert [e.text for e in private.events] == ["C tells A k.location = tin",
                                                "C tells B k.location = tin"]
    assert plan.before[1] == 2 and private.left[1] == 0 and announce.left[1] == 0
    assert plan.best in ("private", "announce")


def test_plan_announcements_is_simulated_at_its_step_not_at_the_end(db):
    body = ("A, B enter r\nin r: k.s = one\nA exits r\nB sets k.s = two\n"
            "expect plan_announcements k.s by B tells = {A}\n"
            "expect plan_announcements k.s by B private depth 1 = 0\n"
            "B tells A k.s = two\n"                       # later: A learns it anyway
            "expect plan_announcements k.s by B tells = {}")
    assert passed(db, body) == [True, True, True]


def test_plan_announcements_with_nothing_to_say(db):
    body = SALLY + ("ask plan_announcements k by C\n"
                    "expect plan_announcements k by C private depth 1 = 1")  # B, as before
    plan, check = run(db, body).answers
    assert plan.result.best is None and check.passed
    assert [p.messages for p in plan.result.plans] == [0, 0]
    assert plan.result.lines() == ["C holds nothing about k.location: nothing to announce"]


def test_forks_are_dropped_even_when_a_simulation_fails(db, monkeypatch):
    model = scenario(HEADER.format(policy="default") + SALLY + "}\n")
    engine = FalkorEngine.build(db, model)
    view = engine.view(len(model.events))

    def broken(self, graphs, statements):
        assert graphs.world.startswith(FORK_PREFIX)
        raise RuntimeError("the simulation failed")

    monkeypatch.setattr(executor_module.Executor, "execute", broken)
    with pytest.raises(RuntimeError):
        plan_announcements(view, "k.location", "A")
    engine.close()
    assert not [n for n in db.graph_names() if n.startswith(FORK_PREFIX)]


def test_plan_announcements_leaves_no_fork_behind(db):
    before = set(db.graph_names())
    run(db, SALLY + "ask plan_announcements k by A")
    assert not [n for n in set(db.graph_names()) - before if n.startswith(FORK_PREFIX)]


# ---------------------------------------------------------------- context_for


def test_context_orders_corrections_then_tells_then_asks_and_keeps_private_ones(db):
    body = ("A, B enter r\nin r: k.s = one\nB exits r\nA sets k.s = two\n"  # correct
            "A sets m.s = x\n"                                               # tell
            "B tells A n.s = y\n"        # A holds y and thinks B holds y: no difference
            "C tells A p.s = z\n"                                            # private
            "A tells B w.s = 1\n"       # A > B = 1, A (the speaker) holds nothing: ask
            "ask context_for A talking_to B\n"
            "expect context_for A talking_to B first = k.s")
    context, check = run(db, body).answers
    assert check.passed
    assert [(d.key, d.action) for d in context.result.differences] == [
        ("k.s", "correct"), ("m.s", "tell"), ("w.s", "ask"), ("p.s", "private")]
    text = context.result.text
    assert 'k.s: I hold "two"; I think B holds "one" (correct it)' in text
    assert text.splitlines()[-1] == 'Correct first: k.s = "two"'


# ---------------------------------------------------------------- command line and Cypher


def test_run_json_carries_each_analysis_with_its_evidence(db):
    result = CliRunner().invoke(app, ["run", str(SCENARIOS / "refund_handoff.tom"), "--json",
                                      "--db", db.url])
    assert result.exit_code == 0, result.output
    answers = json.loads(result.output)["scenarios"][0]["answers"]
    analyses = {a["analysis"] for a in answers if "analysis" in a}
    assert analyses == {"false_beliefs", "who_knows", "handoff", "common_ground", "explain",
                        "plan_announcements", "context_for"}
    receipt = next(a for a in answers if a.get("analysis") == "handoff" and a["kind"] == "ask")
    assert receipt["answer"]["tokens"]["handoff"] < receipt["answer"]["tokens"]["transcript"]


def test_compiled_handoff_reads_the_senders_mind_and_keeps_user_values_in_parameters():
    text = """scenario s {
  agents "O'Brien", "DETACH `x`"
  "O'Brien" sets k.s = "}) MATCH (n)"
  handoff "O'Brien" -> "DETACH `x`" write
  ask handoff "O'Brien" -> "DETACH `x`"
}
"""
    handed = [{"key": "k.s", "value": "}) MATCH (n)", "many": False,
               "support": ["MATCH (n) via O'Brien"], "authority": 3, "published": None,
               "valid_from": "", "ended": False, "valid_to": "", "about": None, "known": False,
               "rivals": [{"value": "DETACH", "source": "DETACH via O'Brien", "authority": 1}]}]
    plan = compile_scenario(scenario(text), lambda event: Bindings(handed=handed))
    statements = plan.events[1].statements
    assert statements[0].template == "communication.cypher"
    assert any(s.graph == "DETACH `x`" for s in statements)  # the receiver's mind is written
    assert any(s.params.get("contests") for s in statements)  # and its caveats
    for statement in plan.all_statements():
        for value in ("O'Brien", "DETACH", "MATCH (n)"):
            assert value not in statement.cypher