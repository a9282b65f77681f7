"""Property tests on generated scenarios, run on the real FalkorDB runtime (docs/semantics.md
section 5): the engine agrees with the reference interpreter on every chain, key and step,
and the belief invariants hold.

A belief history is the set of versions (chain, key, value, since, until) a perspective
held; `belief(chain, key, step)` for every step is a function of it, so comparing histories
compares every answer at every step. A failing example prints the scenario as .tom text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

import pytest
from hypothesis import Phase, event, find, given, note, settings
from hypothesis import strategies as st

from strategies import (authority_files, handoff_files, inline_policy_files, linked_files,
                        scenario_files)
from tomc.analysis.handoff import handed_over, handoff, private_values
from tomc.compiler.routing import communication_routes
from tomc.dsl.checker import check_text
from tomc.dsl.formatter import format_file
from tomc.reference.interpreter import run_reference
from tomc.dsl.program import QueryModel, ReadyQuery
from tomc.readiness import ReadyAnswer
from tomc.reference.view import ReferenceView
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.reference import ReferenceEngine
from tomc.runner import run_scenario

Version = tuple[tuple[str, ...], str, str, int, object]  # chain, key, value, since, until

# The shipped policies, generated policies with their own routing rules, trust modes,
# sources and cardinalities, and disputes under `trust authority` (where claims are
# contested: the shipped policies trust credulously).
FILES = scenario_files() | inline_policy_files() | authority_files()
# Files of claims, tells and handoffs under `trust authority`: handoffs with sources and
# caveats to carry on, which FILES draws rarely.
HANDOFFS = handoff_files()


def checked(file):
    """The .tom text of a generated file and its one checked scenario."""
    text = format_file(file)
    note(f"scenario:\n{text}")
    result = check_text(text, "generated.tom")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    return text, result.scenarios[0]


def engine_versions(db, scenario) -> tuple[list, object]:
    """Run the scenario on FalkorDB; every version every chain (and the truth) held, read
    from the graphs (held and superseded at the last step), and the run."""
    run = run_scenario(scenario, "falkordb", db)
    view = run.view(len(scenario.events))
    chains = [(), *scenario.chains()]
    return [*view.held(chains), *view.superseded(chains)], run


def histories_from_engine(db, scenario) -> set[Version]:
    versions, _ = engine_versions(db, scenario)
    return {(h.chain, h.key, h.value, h.since, h.until) for h in versions}


def histories_from_reference(scenario) -> set[Version]:
    interpreter = run_reference(scenario)
    return {(chain, b.key, b.value, b.since, b.until)
            for chain, beliefs in interpreter.beliefs.items() for b in beliefs
            if b.since != b.until}


def held_at(history: set[Version], step: int) -> dict:
    """belief(chain, key, step) for every chain and key: the set of values held."""
    out: dict = defaultdict(set)
    for chain, key, value, since, until in history:
        if since <= step and (until is None or until > step):
            out[(chain, key)].add(value)
    return dict(out)


@given(FILES)
def test_engine_agrees_with_reference_on_every_chain_key_and_step(db, file):
    _, scenario = checked(file)
    assert histories_from_engine(db, scenario) == histories_from_reference(scenario)


@given(FILES)
def test_non_witness_chains_never_change(db, file):
    """Invariant 1: a chain containing a non-witness of an event is not changed by it,
    but for the agent a report or a handoff's hearsay is about, last in the chain (its
    models change: docs/semantics.md section 5)."""
    _, scenario = checked(file)
    versions, run = engine_versions(db, scenario)
    history = {(h.chain, h.key, h.value, h.since, h.until) for h in versions}
    witnesses = {e.step: set(e.witnesses)
                 for e in run.view(len(scenario.events)).events()}
    about = {e.step for e in scenario.events
             if e.kind == "handoff" or getattr(e, "about", None) is not None}
    for chain, key, value, since, until in history:
        if chain:  # the truth observes everything
            for step in (since, until):
                if step is not None:
                    watched = chain[:-1] if step in about else chain
                    assert set(watched) <= witnesses.get(step, set()), (chain, key, step)


@given(FILES)
def test_history_is_append_only(db, file):
    """Invariant 3: answers for step s do not change when later events are added."""
    _, scenario = checked(file)
    full = histories_from_engine(db, scenario)
    cut = len(scenario.events) // 2
    prefix = replace(scenario, name=scenario.name + "_prefix", events=scenario.events[:cut],
                     queries=[])
    early = histories_from_engine(db, prefix)
    for step in range(cut + 1):
        assert held_at(early, step) == held_at(full, step), step


@given(FILES)
def test_one_current_value_for_cardinality_one(db, file):
    """Invariant 4: for a cardinality-one key, at most one value at any step."""
    _, scenario = checked(file)
    history = histories_from_engine(db, scenario)
    for step in range(len(scenario.events) + 1):
        for (chain, key), held in held_at(history, step).items():
            assert scenario.policy.is_many(key) or len(held) == 1, (chain, key, step, held)


@given(FILES)
def test_no_claim_supersedes_a_higher_authority_belief(db, file):
    """Invariant 5: under `trust authority`, a claim never supersedes higher authority,
    except in a chain that models the claim's relaying agent (`claim K = w from X by S`:
    `L > S`, `X > L > S`, ...), which takes S's word outright: S is taken to believe what
    S says (docs/semantics.md section 4, "Speakers"). Under `trust learned` likewise, each
    version's authority being its source's standing when it was adopted."""
    _, scenario = checked(file)
    if scenario.policy.trust not in ("authority", "learned"):
        return
    versions, run = engine_versions(db, scenario)
    for new in versions:
        if new.kind != "claim":
            continue
        speaker = getattr(scenario.events[new.since - 1], "speaker", None)
        if speaker and len(new.chain) >= 2 and new.chain[-1] == speaker:
            continue
        closed = [old for old in versions if old.chain == new.chain and old.key == new.key
                  and old.until == new.since and old.value != new.value]
        if not closed:
            continue
        authority = {h.value: h.authority
                     for h in run.view(new.since).held([new.chain]) if h.key == new.key}
        before = {h.value: h.authority
                  for h in run.view(new.since - 1).held([new.chain]) if h.key == new.key}
        for old in closed:
            assert authority[new.value] >= before[old.value], (new, old)


def standings(view, scenario) -> dict:
    """{source: (standing, authority, changes)} for every source the policy or the
    scenario names (agents speak as sources), as of the view's step."""
    names = {*scenario.policy.authorities, *scenario.agents}
    return {s: (lambda x: (x.value, x.authority, x.changes))(view.standing(s)) for s in names}


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(authority_files())
def test_learned_standings_agree_and_change_only_at_settlements(db, file):
    """Under `trust learned` (docs/semantics.md section 4, "Learned trust"): both engines
    give every source the same standing at every step; a standing changes only at a claim
    or a retraction, and only for a source that had claimed that key before; each claim's
    new version carries its source's standing from the step before; and while no standing
    has changed, the answers are those of `trust authority`, on both engines."""
    _, scenario = checked(file)
    if scenario.policy.trust != "learned":
        return
    run = run_scenario(scenario, "falkordb", db)
    interpreter = run_reference(scenario)
    last = len(scenario.events)
    claimed: dict = defaultdict(set)  # key -> the sources that claimed a value of it
    for step in range(last + 1):
        engine = standings(run.view(step), scenario)
        assert engine == standings(ReferenceView(interpreter, step), scenario), step
        event = scenario.events[step - 1] if step else None
        for source, (_, _, changes) in engine.items():
            for at, _ in changes:
                if at == step:
                    assert event.kind in ("claim", "retract"), (source, step)
                    assert source in claimed[event.fact.key], (source, step)
        if event is not None and event.kind == "claim" and not event.fact.ended:
            claimed[event.fact.key].add(event.source)
    final = standings(run.view(last), scenario)
    for h in run.view(last).held([()]):  # the truth: claims only, resolved by the table
        if h.kind == "claim" and len(h.support) == 1:
            before = run.view(h.since - 1).standing(h.source).value
            assert h.authority == before, h
    if all(not changes for _, _, changes in final.values()):
        fixed = replace(scenario, name=scenario.name + "_authority",
                        policy=replace(scenario.policy, trust="authority"))
        assert histories_from_engine(db, scenario) == histories_from_reference(fixed)
        assert histories_from_reference(scenario) == histories_from_reference(fixed)


def provenance(view, chains) -> set:
    """Every version the chains held by the view's step, with its provenance: kind, rule,
    source, support, authority, publication and valid time, what ended it, and the rivals
    contested against it."""
    return {(h.chain, h.key, h.value, h.since, h.until, h.kind, h.rule, h.source,
             tuple(sorted(h.support)), h.authority, h.published, h.valid_from, h.ending,
             tuple(sorted((r.value, r.source or "", r.authority, r.step, r.kind)
                          for r in h.rivals)))
            for h in [*view.held(chains), *view.superseded(chains)]}


@given(FILES | HANDOFFS)
def test_engines_agree_on_provenance(db, file):
    """Invariant 2 with provenance: every version's source, support, authority and
    contested rivals are the same on both engines (handoffs carry all of them on)."""
    _, scenario = checked(file)
    steps = len(scenario.events)
    run = run_scenario(scenario, "falkordb", db)
    chains = [(), *scenario.chains()]
    reference = ReferenceView(run_reference(scenario), steps)
    assert provenance(run.view(steps), chains) == provenance(reference, chains)


@given(FILES | HANDOFFS)
def test_provenance_at_a_step_is_append_only_on_each_engine(db, file):
    """Invariant 3 with provenance, on each engine's answers alone (both could share a
    bug): what a view at step s says of every version (source, support, authority,
    publication time, rivals, ending) does not change when later events are applied. A
    corroboration that outranks a version later gives it a later publication time then,
    not at s (docs/semantics.md section 4, "Arrival order")."""
    _, scenario = checked(file)
    cut = len(scenario.events) // 2
    prefix = replace(scenario, name=scenario.name + "_prefix", events=scenario.events[:cut],
                     queries=[])
    chains = [(), *scenario.chains()]
    full, early = run_scenario(scenario, "falkordb", db), run_scenario(prefix, "falkordb", db)
    assert provenance(full.view(cut), chains) == provenance(early.view(cut), chains)
    assert provenance(ReferenceView(run_reference(scenario), cut), chains) \
        == provenance(ReferenceView(run_reference(prefix), cut), chains)


def test_an_outranking_corroboration_dates_the_version_from_its_step_on(db):
    """The example the property above found (both engines once overwrote the publication
    time in place): read at the step before the later claim, the version keeps the date
    it had then; after it, the later one; and the handoff between sent the earlier."""
    text = ("policy p {\n  trust authority\n  source S authority 1\n}\n"
            "scenario s {\n  agents A, B\n"
            "  claim k.v = x from S at 2026-03-01 to A\n"
            "  handoff A -> B write\n"
            "  claim k.v = x from S at 2027-01-01 to A\n}\n")
    (scenario,) = check_text(text, "outranked.tom").scenarios
    for engine in ("falkordb", "reference"):
        run = run_scenario(scenario, engine, db if engine == "falkordb" else None)
        dates = {step: {(h.chain, h.published) for h in run.view(step).held([("A",), ("B",)])}
                 for step in (2, 3)}
        assert dates[2] == {(("A",), "2026-03-01T00:00:00"), (("B",), "2026-03-01T00:00:00")}, engine
        assert dates[3] == {(("A",), "2027-01-01T00:00:00"), (("B",), "2026-03-01T00:00:00")}, engine


@given(HANDOFFS)
def test_a_handoff_keeps_the_senders_sources_and_caveats(db, file):
    """On one engine's answers alone (both could share a bug): after `handoff S -> R
    write`, when a rule names R and R holds a sent value, its support holds each source S
    held it with, written `SOURCE via S` (S itself for what S observed); and every rival S
    recorded against it (not private) is contested against what R holds, via S; a value R
    adopted from the handoff keeps S's publication time and valid_from (docs/semantics.md
    section 3); the rivals S > R's version lacks go when R already holds the value (sent
    alone, as caveats);
    and a value S knows ended, which R held, is closed at R or contested by
    "(ended)" (a tie under `ties first` drops it)."""
    _, scenario = checked(file)
    handoffs = [e for e in scenario.events if e.kind == "handoff"]
    if not handoffs:
        return
    run = run_scenario(scenario, "falkordb", db)
    policy = scenario.policy
    for event in handoffs:
        sender, receiver = event.speaker, event.listener
        believers = [] if policy.trust == "exit_order" else [receiver]
        routed = {r.chain for r in communication_routes(policy, scenario.chains(), event,
                                                        believers)}
        if (receiver,) not in routed:
            continue
        held = {(h.key, h.value): h for h in run.view(event.step).held([(receiver,)])}
        before = run.view(event.step - 1).held([(sender,)])
        model = run.view(event.step - 1).held([(sender, receiver)])
        for sent in handed_over(run.view(event.step - 1), sender, receiver, event.authority):
            mine = held.get((sent.key, sent.value))
            if sent.ended:
                if mine is not None and policy.ties != "first":
                    assert ("(ended)", event.step) in {(r.value, r.step) for r in mine.rivals}, (
                        event.text, mine)
                continue
            if sent.about is not None:  # hearsay: test_reports_and_hearsay_...
                continue
            own = next(h for h in before if (h.key, h.value) == (sent.key, sent.value))
            expected = {f"{s} via {sender}" for s in own.support} or {sender}
            if mine is not None and not sent.known:  # a caveat alone: its value not sent
                assert expected <= set(mine.support), (event.text, mine)
                if mine.since == event.step and mine.source == sent.support[0]:
                    assert (mine.published, mine.valid_from) == (
                        own.published, own.valid_from), (event.text, mine, own)
            # A caveat (a value S > R holds) carries the rivals S > R's version lacks.
            had = {r.value for h in model if (h.key, h.value) == (sent.key, sent.value)
                   for r in h.rivals} if sent.known else set()
            current = [h for (key, _), h in held.items() if key == sent.key]
            for rival in (r for r in own.rivals if r.kind != "tell" and r.value not in had):
                for h in current:
                    if h.value != rival.value:
                        assert (rival.value, f"{rival.source} via {sender}"
                                if rival.source else sender, event.step) in {
                            (r.value, r.source, r.step) for r in h.rivals}, (event.text, h)


@given(HANDOFFS)
def test_own_notes_and_private_values_are_never_handed_on(db, file):
    """Private means private (issue 36 item 5), on each engine: before each `handoff S -> R
    write`, the receipt shows no value of a key the policy declares `agent_only` (each is
    excluded as `agent_only`, like a `private` one with its value hidden) and no hearsay of
    a value it excludes as private; the write sends none of them, and no chain takes a value
    of an `agent_only` key at the handoff's step."""
    _, scenario = checked(file)
    handoffs = [e for e in scenario.events if e.kind == "handoff"]
    own = scenario.policy.agent_only
    chains = scenario.chains()
    for name in ("falkordb", "reference"):
        run = run_scenario(scenario, name, db)
        for event in handoffs:
            sender, receiver = event.speaker, event.listener
            before = run.view(event.step - 1)
            receipt = handoff(before, sender, receiver)
            shown = [*receipt.included, *receipt.endings, *(h for _, h in receipt.hearsay)]
            assert not {i.key for i in shown} & own, (name, event.text)
            assert not {c.key for c in receipt.caveats} & own, (name, event.text)
            assert all(e.value is None for e in receipt.excluded
                       if e.reason in ("agent_only", "private")), (name, event.text)
            assert all(e.reason == "agent_only" for e in receipt.excluded if e.key in own)
            secret = private_values(before, sender)
            assert not {(h.key, h.value) for _, h in receipt.hearsay} & secret, event.text
            sent = handed_over(before, sender, receiver, event.authority)
            assert not {s.key for s in sent} & own, (name, event.text)
            assert not {(s.key, s.value) for s in sent if s.about} & secret, event.text
            taken = [h for h in run.view(event.step).held(chains)
                     if h.since == event.step and h.key in own]
            assert not taken, (name, event.text, taken)


@given(scenario_files())  # the shipped policies: `every chain over witnesses adopts`
def test_peekers_are_unseen_and_distracted_agents_miss_the_event(db, file):
    """On one engine's answers alone, under `every chain over witnesses` rules: at an
    event someone peeked at, a changing chain that holds a peeker starts with one (the
    others never learn that the peeker saw it); at an event someone was distracted from,
    no chain of the distracted agent changes."""
    _, scenario = checked(file)
    observe = scenario.policy.sections.get("observe")
    if observe is None or any(rule.over != ["witnesses"] for rule in observe.rules):
        return
    modified = {e.step: e for e in scenario.events
                if getattr(e, "peekers", ()) or getattr(e, "distracted", ())}
    if not modified:
        return
    for chain, key, value, since, until in histories_from_engine(db, scenario):
        for event in (modified.get(since), modified.get(until)):
            if event is not None and chain:
                peekers = set(event.peekers)
                assert chain[0] in peekers or not peekers & set(chain), (chain, event.text)
                assert chain[0] not in event.distracted, (chain, event.text)


# Each example runs its queries on both engines, and plan_announcements copies graphs
# (about 0.1 s per GRAPH.COPY): a quarter of the profile's examples.
@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(FILES)
def test_engines_agree_on_every_answer(db, file):
    """Invariant 2 for what agents ask of memory: every expect and ask, belief queries
    (with provenance) and analyses (with their evidence), is the same on both engines."""
    _, scenario = checked(file)
    engine = run_scenario(scenario, "falkordb", db)
    reference = run_scenario(scenario, "reference")
    for mine, theirs in zip(engine.answers, reference.answers):
        assert mine.to_json() == theirs.to_json(), mine.query.text


def valid_time_answers(engine, scenario, step: int) -> dict:
    """Every `on DATE` answer at `step` for the truth and each agent, every key of the
    scenario, on every date an event names (and one after them all)."""
    dates = sorted({getattr(e, field) for e in scenario.events
                    for field in ("valid_from", "valid_to") if getattr(e, field, None)}
                   | {"9999-12-31"})
    keys = sorted({e.fact.key for e in scenario.events if getattr(e, "fact", None)})
    out = {}
    for chain in [(), *((a,) for a in scenario.agents)]:
        for key in keys:
            for on in dates:
                query = QueryModel("ask", chain, key, step, "", 0, on_date=on)
                out[(chain, key, on)] = engine.answer(query).values
    return out


# Each example asks every key on every date, on both engines, twice.
@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(FILES)
def test_valid_time_answers_are_append_only_on_both_engines(db, file):
    """Invariant 3 on the valid-time clock: an `on DATE` answer about step s does not change
    when later events close the interval it found (both engines once shared this bug, so
    the differential test could not see it: this checks each engine against itself)."""
    _, scenario = checked(file)
    cut = len(scenario.events) // 2
    prefix = replace(scenario, name=scenario.name + "_prefix", events=scenario.events[:cut],
                     queries=[])
    for build in (lambda s: FalkorEngine.build(db, s), reference_engine):
        full, early = build(scenario), build(prefix)
        try:
            assert valid_time_answers(full, scenario, cut) == \
                valid_time_answers(early, scenario, cut)
        finally:
            full.close()
            early.close()


# Both engines, each checked alone (a bug both share would pass the differential test).
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(FILES)
def test_an_ending_closes_only_what_it_names_and_leaves_unknown(db, file):
    """docs/language.md "Endings" (docs/semantics.md section 4): an ending (`claim K [= V]
    ended`, `A retracts K [= V]`) never adopts a value; every version it closes is of its
    key (and value, when named; adopted from A, for a retraction) and was held just before;
    a cardinality-one chain it closed reads unknown afterwards."""
    _, scenario = checked(file)
    endings = {e.step: e for e in scenario.events
               if getattr(e, "fact", None) is not None and e.fact.ended}
    for name in ("falkordb", "reference"):
        run = run_scenario(scenario, name, db if name == "falkordb" else None)
        chains = [(), *scenario.chains()]
        view = run.view(len(scenario.events))
        versions = [*view.held(chains), *view.superseded(chains)]
        for step, ending in endings.items():
            fact = ending.fact
            assert not [v for v in versions if v.since == step], (name, step)
            closed = [v for v in versions if v.until == step]
            for v in closed:
                assert v.key == fact.key, (name, step, v)
                assert fact.value is None or v.value == fact.value, (name, step, v)
                assert fact.of is None or v.source == fact.of, (name, step, v)
            after = run.view(step)
            for chain in {v.chain for v in closed}:
                held = [h for h in after.held([chain]) if h.key == fact.key]
                assert scenario.policy.is_many(fact.key) or not held, (name, step, held)
            before = {(h.chain, h.key, h.value) for h in run.view(step - 1).held(chains)}
            assert {(v.chain, v.key, v.value) for v in closed} <= before, (name, step)


def reference_engine(scenario):
    return ReferenceEngine.build(None, scenario)


# Found by the property test: one event copied several chains, each from a different chain
# above it; FalkorDB bound every copy to the first one's source (tomc/compiler/templates/
# write.cypher says how it is avoided).
SEVERAL_COPIES = 'use policy hitom\n\nscenario repro {\n  agents box, Sally, Zoë, Anne, marble, x\n  rooms _tmp, Bob, room\n\n  Sally, Anne, box enter Bob\n  box moves Sally to zRsjVgU1\n  box announces a1 is in "+Ðãýã-/4\\r"\n  handoff Anne -> marble write\n  Sally says Sally is in x\n  in Bob: a1 is in x\n  box says Sally is in "zRsjVgU1"\n  Sally waits\n  handoff Anne -> marble write\n  claim a1 is in "+Ðãýã-/4\\r" from marble by Sally in Bob\n  in Bob: Sally is in "zRsjVgU1"\n  Sally waits\n  Sally says Zoë is in zRsjVgU1\n  Sally moves a1 to x\n  Zoë, Sally, marble enter Bob\n  noop\n  box tells Anne Zoë = to\n  in Bob: Sally." " = 2059-10-10\n  handoff box -> Anne write\n  Anne says a1 is in "zRsjVgU1"\n  handoff Sally -> x write\n  box says Zoë = 824825\n  marble sets a1." " = true\n  in room: Zoë is in "zRsjVgU1"\n  box, Anne, Sally enter _tmp\n  box says Sally." " = 2010-07-24\n  claim Sally is in "+Ðãýã-/4\\r" from marble by Sally valid from 2049-08-09T11:50:40 to Zoë\n  Sally, Zoë, x enter Bob\n  in room: Sally is in "zRsjVgU1"\n  x, marble enter room\n  Anne says Zoë = "x"\n  noop ""\n\n  expect context_for box talking_to marble differ = {a1." "}\n  expect explain x > Sally > Anne > box a1." " from step 32\n  expect handoff Zoë -> Anne caveats = {Zoë}\n}\n'


def test_several_chains_copied_in_one_event_keep_their_own_history(db):
    (scenario,) = check_text(SEVERAL_COPIES, "copies.tom").scenarios
    assert histories_from_engine(db, scenario) == histories_from_reference(scenario)


def ready_questions(scenario) -> list[ReadyQuery]:
    """Every procedure of the scenario asked from the truth, each agent and a few deeper
    chains, at the last step, halfway, and on every date an event names."""
    steps = sorted({len(scenario.events), len(scenario.events) // 2})
    dates = sorted({e.valid_from for e in scenario.events if getattr(e, "valid_from", None)})
    chains = [(), *((a,) for a in scenario.agents),
              *[c for c in scenario.chains() if len(c) > 1][:6]]
    return [ReadyQuery("ask", procedure, chain, step, "", 0, on_date=on)
            for procedure in scenario.procedures.values() for chain in chains
            for step in steps for on in [None, *dates[:2]]]


def readiness(answer: ReadyAnswer) -> tuple:
    return (answer.verdict, answer.blockers, answer.unknown,
            [s.to_json() for s in answer.steps])


# Each example asks every procedure from a dozen perspectives at two steps, on both engines.
@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(FILES)
def test_engines_agree_on_readiness(db, file):
    """Invariant 2 for procedures: the verdict, blockers, unknown steps and every step's
    values, sources, authority and caveats are the same on both engines (the FalkorDB
    answer is one Cypher read, read_ready.cypher; the reference computes it in Python)."""
    _, scenario = checked(file)
    engine = FalkorEngine.build(db, scenario)
    reference = reference_engine(scenario)
    try:
        for query in ready_questions(scenario):
            assert readiness(engine.ready(query)) == readiness(reference.ready(query)), query
    finally:
        engine.close()


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(FILES)
def test_readiness_agrees_with_beliefs_read_one_by_one(db, file):
    """On FalkorDB alone (a bug both engines shared would pass the differential test): each
    step's values are what `believes` reads for its key, its status follows the step table
    of docs/language.md, and the verdict is `ready` iff every step is satisfied, `blocked`
    iff one holds another value."""
    _, scenario = checked(file)
    engine = FalkorEngine.build(db, scenario)
    try:
        for query in ready_questions(scenario):
            answer = engine.ready(query)
            satisfied, blocked = [], []
            for requirement, step in zip(query.procedure.requires, answer.steps, strict=True):
                held = engine.answer(QueryModel("ask", query.chain, requirement.key,
                                                query.step, "", 0, on_date=query.on_date))
                assert step.values == held.values
                assert step.caveats == held.contested
                satisfied.append(bool(held.values) and (
                    requirement.value is None or requirement.value in held.values))
                blocked.append(bool(held.values) and not satisfied[-1])
                assert step.status == ("satisfied" if satisfied[-1] else
                                       "blocked" if blocked[-1] else "unknown")
            assert (answer.verdict == "ready") == all(satisfied)
            assert (answer.verdict == "blocked") == any(blocked)
    finally:
        engine.close()


def _outcomes(file) -> set[str]:
    """What resolution did in a generated file's reference run: `contest` when a claim
    was recorded against a held value, `supersede`, `corroborate` (a second source)."""
    _, scenario = checked(file)
    interpreter = run_reference(scenario)
    found = set()
    for beliefs in interpreter.beliefs.values():
        for belief in beliefs:
            found |= {"contest"} if belief.contested else set()
            found |= {"supersede"} if belief.until is not None else set()
            found |= {"corroborate"} if len(belief.support) > 1 else set()
    return found


def test_generated_disputes_reach_every_resolution_outcome():
    # Without this, a bug in contested claims could pass every property above unseen: no
    # generated file of the other strategies ever contested a claim (their trust is mostly
    # credulous). Checked on the reference run alone, so it needs no FalkorDB.
    for outcome in ("contest", "supersede", "corroborate"):
        find(authority_files(), lambda f, outcome=outcome: outcome in _outcomes(f),
             settings=settings(max_examples=200, database=None, phases=[Phase.generate]))


TWICE_NAMED = """policy P {
  trust authority
  source marble authority -1

  on claim:
    every chain over listeners adopts
    every chain over listeners adopts
}

use policy P

scenario twice_named {
  agents Sally, Anne
  rooms box

  Sally, Anne enter box
  claim Sally = approved from Sally to all
  claim Sally = rejected from marble to all
}
"""

REPEATED_RIVAL = """policy P {
  trust authority
  source bulletin authority 4
  source chat authority 1
}

use policy P

scenario repeated_rival {
  agents Planner, Scout, Ops

  claim freeze.date = "2026-10-18" from bulletin at 2026-10-14 to Scout
  claim freeze.date = "2026-10-20" from chat at 2026-10-15 to Scout
  claim freeze.date = "2026-10-20" from chat at 2026-10-16 to Scout
  handoff Scout -> Planner write
}
"""


@pytest.mark.parametrize("text", [TWICE_NAMED, REPEATED_RIVAL], ids=["twice_named",
                                                                      "repeated_rival"])
def test_engines_agree_on_found_provenance_cases(db, text):
    # Found by the generators: a chain two rules name heard a losing claim twice on the
    # reference (one contested claim per rule); two equal rivals handed over became one
    # contested claim on FalkorDB (one Contest per distinct row).
    (scenario,) = check_text(text, "found.tom").scenarios
    steps = len(scenario.events)
    run = run_scenario(scenario, "falkordb", db)
    chains = [(), *scenario.chains()]
    assert provenance(run.view(steps), chains) == provenance(
        ReferenceView(run_reference(scenario), steps), chains)


@given(HANDOFFS)
def test_reports_and_hearsay_change_only_models_of_their_subject(db, file):
    """On one engine's answers alone: a report `S tells L X believes K = V` changes only
    chains that end with X (never X's own belief, nor the truth), and when the rules name L,
    `L > X` then holds V or records it as contested; a handoff's hearsay about X reaches
    `R > X` alike (docs/semantics.md section 3, "Reports")."""
    _, scenario = checked(file)
    run = run_scenario(scenario, "falkordb", db)
    chains = [(), *scenario.chains()]
    versions, _ = engine_versions(db, scenario)
    policy = scenario.policy
    for event in scenario.events:
        if event.kind == "tell" and event.about is not None:
            changed = {h.chain for h in versions
                       if h.since == event.step or h.until == event.step}
            assert all(c and c[-1] == event.about for c in changed), (event.text, changed)
            pairs = [(event.listeners[0], event.about,
                      event.fact.key, event.fact.value)]
        elif event.kind == "handoff":
            sent = handed_over(run.view(event.step - 1), event.speaker, event.listener,
                               event.authority)
            pairs = [(event.listener, s.about, s.key, s.value) for s in sent if s.about]
        else:
            continue
        believers = [] if policy.trust == "exit_order" else list(event.listeners)
        routed = {r.chain for r in communication_routes(policy, scenario.chains(), event,
                                                        believers)}
        for listener, about, key, value in pairs:
            if (listener,) not in routed or (listener, about) not in chains:
                continue
            model = [h for h in run.view(event.step).held([(listener, about)]) if h.key == key]
            assert any(h.value == value or value in {r.value for r in h.rivals}
                       for h in model) or policy.ties == "first", (event.text, model)


def search_queries(scenario) -> list[str]:
    """Queries drawn from the scenario's own words: each key, value and source word whole,
    by its first two letters and misspelt (a letter put in before its last: forgiven,
    docs/language.md "Search"), every event text's first word, and all of them at once."""
    from tomc.search_text import words
    found = sorted({w for e in scenario.events if getattr(e, "fact", None)
                    for w in words(e.fact.key, e.fact.value, getattr(e, "source", None))
                    .split()})
    return [*found, *sorted({w[:2] for w in found}), " ".join(found),
            *sorted({f"{w[:-1]}q{w[-1]}" for w in found if len(w) > 3}),
            *{words(e.text).split()[0] for e in scenario.events if words(e.text)}]


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(FILES | HANDOFFS)
def test_engines_agree_on_search(db, file):
    """Invariant 2 for search, who_knows_best and open_tasks (docs/language.md): the same
    ranking, and the same hits (chain, key,
    value, steps, source, support, authority, score) in the same order, and the same
    events, at every step, although FalkorDB finds them through its full-text index and
    the reference by scanning every chain."""
    from tomc.analysis.about import about
    from tomc.analysis.best import who_knows_best
    from tomc.analysis.tasks import open_tasks
    from tomc.analysis.search import search
    _, scenario = checked(file)
    engine = run_scenario(scenario, "falkordb", db)
    reference = run_scenario(scenario, "reference")
    queries = search_queries(scenario)
    for step in sorted({0, len(scenario.events) // 2, len(scenario.events)}):
        mine, theirs = engine.view(step), reference.view(step)
        for query in queries:
            args = (query, scenario.agents, True, True, 1000)
            assert search(mine, *args).to_json() == search(theirs, *args).to_json(), \
                (step, query)
            assert who_knows_best(mine, query).to_json() == \
                who_knows_best(theirs, query).to_json(), (step, query)
        subjects = {q.split()[0] for q in queries if q}
        for chain in [(), *((a,) for a in scenario.agents)]:
            assert open_tasks(mine, chain).to_json() == open_tasks(theirs, chain).to_json()
            for subject in sorted(subjects)[:3]:
                assert about(mine, subject, chain, 2).to_json() == \
                    about(theirs, subject, chain, 2).to_json()


DISPUTES = """policy disputes {
  depth 2
  trust authority
  source s0 authority 0
  source s1 authority 1
  source s2 authority 2
  source s3 authority 2
}

use policy disputes

scenario dispute {
  agents A, B
"""


@st.composite
def dated_claims(draw) -> list[str]:
    """2-7 claims about one or two keys, each from a source of drawn authority (two share
    authority 2), at a publication time no other claim has (a tie, same authority and
    instant, is the policy's `ties` to decide by arrival: docs/semantics.md section 4,
    "Arrival order"), to A or to everyone."""
    n = draw(st.integers(2, 7))
    days = draw(st.lists(st.integers(1, 28), min_size=n, max_size=n, unique=True))
    return [f"claim {draw(st.sampled_from(['plan.tier', 'plan.tier', 'plan.city']))} = "
            f"{draw(st.sampled_from(['red', 'green', 'blue']))} "
            f"from {draw(st.sampled_from(['s0', 's1', 's2', 's3']))} "
            f"at 2026-03-{day:02d} to {draw(st.sampled_from(['A', 'all']))}"
            for day in days]


def disputes_in(engine: str, db, claims: list[str]) -> tuple:
    """What arrival order must not change, read back from `engine` after the claims then
    `handoff A -> B write`: before the handoff, every chain's current values with their
    support, rank (authority, publication time) and contested rivals (value and source), and what the handoff sends (facts and caveats:
    value, authority, publication time, rival values); after it, the same of every chain."""
    text = DISPUTES + "".join(f"  {c}\n" for c in claims) + "  handoff A -> B write\n}\n"
    note(f"scenario:\n{text}")
    (scenario,) = check_text(text, "dispute.tom").scenarios
    run = run_scenario(scenario, engine, db if engine == "falkordb" else None)
    chains = [(), *scenario.chains()]

    def current(step: int) -> set:
        return {(h.chain, h.key, h.value, frozenset(h.support), h.authority, h.published,
                 frozenset((r.value, r.source) for r in h.rivals))
                for h in run.view(step).held(chains)}

    n = len(claims)
    sent = {(s.key, s.value, s.known, s.authority, s.published,
             frozenset(r.value for r in s.rivals))
            for s in handed_over(run.view(n), "A", "B", 0)}
    return current(n), sent, current(n + 1)


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(dated_claims().flatmap(lambda c: st.tuples(st.just(c), st.permutations(c))))
def test_dated_disputes_do_not_depend_on_arrival_order(db, orders):
    """docs/semantics.md section 4, "Arrival order" and "Dominance": with publication
    times given, the current values (with their support), the rivals kept as contested
    (value and source: only those no claim of the current value dominates) and what a
    handoff sends (its caveats included) are the same in any arrival order, on each
    engine; and the two engines agree."""
    claims, shuffled = orders
    for engine in ("falkordb", "reference"):
        assert disputes_in(engine, db, claims) == disputes_in(engine, db, shuffled), engine
    assert disputes_in("falkordb", db, claims) == disputes_in("reference", db, claims)


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(linked_files())
def test_engines_agree_on_walks_through_links(db, file):
    """Invariant 2 for links (docs/language.md, "Links"): `explain [CHAIN] KEY follow N` gives
    the same facts, paths and provenance on both engines, FalkorDB's read back from its one
    bounded-traversal read (read_linked.cypher) and the reference's from its own walk; and
    every fact on the walk is about the key's subject or a subject a fact before it links to
    (hop k: k links), so that a walk never grows with N past its last link. `about SUBJECT
    within 2` too: FalkorDB's one read (read_near.cypher) against the reference's walk."""
    from tomc.analysis.about import about
    from tomc.analysis.follow import follow
    _, scenario = checked(file)
    engine = run_scenario(scenario, "falkordb", db)
    reference = run_scenario(scenario, "reference")
    keys = sorted({e.fact.key for e in scenario.events if getattr(e, "fact", None)})
    deepest = 0
    for step in sorted({0, len(scenario.events) // 2, len(scenario.events)}):
        mine, theirs = engine.view(step), reference.view(step)
        for chain in [(), *((a,) for a in scenario.agents[:2])]:
            for key in keys:
                walks = [follow(mine, chain, key, n).to_json() for n in range(4)]
                assert walks == [follow(theirs, chain, key, n).to_json() for n in range(4)], \
                    (step, chain, key)
                for walk in walks:
                    for hop in walk["hops"]:
                        assert len(hop["path"]) - 1 == hop["hops"] <= walk["follow"]
                        subject = hop["key"].rpartition(".")[0] or hop["key"]
                        assert hop["hops"] == 0 or subject == hop["path"][-1]
                        deepest = max(deepest, hop["hops"])
                subject = key.rpartition(".")[0] or key
                assert about(mine, subject, chain, 2).to_json() == \
                    about(theirs, subject, chain, 2).to_json()
    event(f"deepest hop {deepest}")


CLAIM = re.compile(r"claim (\S+) = (\S+) from (\S+) at (\S+) to (\S+)")
AUTHORITIES = {"s0": 0, "s1": 1, "s2": 2, "s3": 2}


def dominates(claim: tuple[int, str], other: tuple[int, str]) -> bool:
    """docs/semantics.md section 4, "Dominance", for dated claims (authority, date)."""
    return claim != other and claim[0] >= other[0] and claim[1] >= other[1]


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(dated_claims(), st.sampled_from(["falkordb", "reference"]))
def test_a_dominated_claim_is_never_a_rival_nor_a_caveat(db, claims, engine):
    """On one engine's answers alone (a bug both engines shared would fail it): after dated
    claims, each chain's current value is contested by exactly the claims of other values
    that no claim of its own value dominates (value and source), all read from the
    scenario text; and a handoff's caveats are such claims too: a superseded value is
    history, never a rival (docs/semantics.md section 4, "Dominance")."""
    text = DISPUTES + "".join(f"  {c}\n" for c in claims) + "  handoff A -> B write\n}\n"
    (scenario,) = check_text(text, "dispute.tom").scenarios
    run = run_scenario(scenario, engine, db if engine == "falkordb" else None)
    parsed = [CLAIM.fullmatch(c).groups() for c in claims]
    n = len(claims)

    def received(chain: tuple) -> list[tuple]:
        # A claim to A reaches A (and the truth); a claim to all every chain.
        return [(key, value, source, AUTHORITIES[source], day)
                for key, value, source, day, to in parsed
                if to == "all" or chain in ((), ("A",))]

    def undominated(chain: tuple, key: str, value: str) -> set:
        mine = [(a, d) for k, v, _, a, d in received(chain) if (k, v) == (key, value)]
        return {(v, s) for k, v, s, a, d in received(chain) if k == key and v != value
                and not any(dominates(c, (a, d)) for c in mine)}

    view = run.view(n)
    for h in view.held([(), *scenario.chains()]):
        rivals = {(r.value, r.source) for r in h.rivals}
        assert rivals == undominated(h.chain, h.key, h.value), (engine, h)
    for sent in handed_over(view, "A", "B", 0):
        for r in sent.rivals if sent.about is None else ():
            source = r.source.removesuffix(" via A")
            assert (r.value, source) in undominated(("A",), sent.key, sent.value), (
                engine, sent)
