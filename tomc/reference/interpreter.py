"""A pure-Python reference interpreter of docs/semantics.md sections 1-4: no FalkorDB.

Written for clarity over speed: explicit state for every chain (the truth is the empty
chain), every belief version kept with the steps it held, and the policy's routing rules
interpreted directly. The FalkorDB engine must agree with it on `belief(chain, key, step)`
for every chain, key and step (docs/semantics.md section 5, invariant 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from tomc.answers import Answer, Provenance
from tomc.beliefs import Ending
from tomc.dsl import ast
from tomc.dsl.program import (ENDED, AnyEvent, Communication, Handoff, Observation,
                              Presence, QueryModel, Quiet, ReadyQuery, ScenarioModel)
from tomc.readiness import ReadyAnswer, StepAnswer, step_status, verdict_of
from tomc.reference.standing import Ledger

Chain = tuple[str, ...]
TRUTH: Chain = ()


@dataclass
class Fact:
    """A value arriving at a perspective: `key = value` from `source` (None: observed). An
    ending (`ended`) closes instead the current versions of `key` (of `value` when given;
    adopted from `of` when given), their valid interval ending at `valid_to`.

    A handed-over fact (`handoff S -> R write`) carries its whole `support` (`SOURCE via S`,
    the first one its `source`) and the `rivals` to record against it as contested claims
    (tomc/analysis/handoff.py `handed_over`). A fact `about` agent X (a report, or hearsay
    a handoff carries) is resolved, instead of into each chain the rules name, into that
    chain's model of X (docs/semantics.md section 3, "Reports"). A `known` fact is never
    resolved: the receiver already holds it, and only its rivals are recorded."""

    key: str
    value: Optional[str]
    many: bool
    room: Optional[str] = None
    source: Optional[str] = None
    authority: int = 0
    published: Optional[str] = None
    valid_from: str = ""
    ended: bool = False
    of: Optional[str] = None
    valid_to: str = ""
    support: Optional[tuple[str, ...]] = None
    rivals: tuple = ()
    about: Optional[str] = None  # a report or hearsay: it goes to each chain's model of X
    known: bool = False  # a handoff's caveat: the receiver holds it, only `rivals` are sent

    def sources(self) -> tuple[str, ...]:
        """The sources the fact comes with: its support, else its one source, if any."""
        if self.support is not None:
            return self.support
        return (self.source,) if self.source is not None else ()


@dataclass
class Belief:
    """One version of a chain's belief about a key, held from `since` until `until`."""

    key: str
    value: str
    since: int
    kind: str
    source: Optional[str]
    authority: int
    published: Optional[str]
    valid_from: str
    room: Optional[str]
    rule: str
    origin_authority: int
    support: list[str] = field(default_factory=list)
    support_since: list[int] = field(default_factory=list)  # the step each source joined
    support_authority: list[int] = field(default_factory=list)  # and its authority
    # Every claim of the value, (source, authority, published): the dominance rule's.
    claimed: list[tuple[Optional[str], int, Optional[str]]] = field(default_factory=list)
    until: Optional[int] = None
    valid_to: Optional[str] = None
    contested: list["Contest"] = field(default_factory=list)
    ending: Optional[Ending] = None  # what closed it, when an ending did
    # (step, publication time) from each claim that outranked it while held, the first
    # entry its own (since, published): `published` is the latest.
    published_since: list[tuple[int, Optional[str]]] = field(default_factory=list)

    def claims(self) -> list[tuple[int, Optional[str]]]:
        """(authority, publication time) of every claim of this value, and of the best one,
        which the belief ranks by."""
        return [*((a, p) for _, a, p in self.claimed), (self.authority, self.published)]

    def disputed_at(self, step: int) -> list["Contest"]:
        """The claims contested against this belief at `step`: recorded by then and not
        dominated by a claim of its value by then (`until`)."""
        return [c for c in self.contested
                if c.step <= step and (c.until is None or c.until > step)]

    def support_at(self, step: int) -> list[str]:
        """The sources that supported this belief by `step`."""
        return [s for s, since in zip(self.support, self.support_since) if since <= step]

    def authority_at(self, step: int) -> int:
        """The authority this belief had at `step`: adopted with `origin_authority`, raised
        by the sources that corroborated it by then."""
        return max([self.origin_authority] + [a for a, since in zip(
            self.support_authority, self.support_since) if since <= step])

    def published_at(self, step: int) -> Optional[str]:
        """The publication time this belief ranked by at `step` (docs/semantics.md
        section 4: a claim that outranks it gives it its own from then on)."""
        return next((published for since, published in reversed(self.published_since)
                     if since <= step), self.published)


@dataclass
class Contest:
    """A claim contested against a belief: `value` from `source` at `step` (docs/semantics.md
    section 4)."""

    step: int
    value: str
    source: Optional[str]
    authority: int
    kind: str
    published: Optional[str] = None
    # From this step a claim of the belief's value dominates it: superseded, no longer
    # disputed, kept for a successor that does not dominate it (section 4, "Dominance").
    until: Optional[int] = None


@dataclass
class Told:
    """`speaker` told `listener` that `key = value` at `step` (a TOLD edge on FalkorDB)."""

    speaker: str
    listener: str
    step: int
    key: str
    value: str


@dataclass
class Stay:
    """An agent's presence in a room from step `since` until step `until` (None: still there)."""

    agent: str
    room: str
    since: int
    until: Optional[int] = None


@dataclass
class EventRecord:
    """What provenance shows of an event."""

    step: int
    kind: str
    text: str
    line: int
    witnesses: list[str]


class ReferenceInterpreter:
    """Runs one checked scenario in memory; then `belief()` and `answer()` read the state."""

    def __init__(self, scenario: ScenarioModel):
        self.scenario = scenario
        self.policy = scenario.policy
        self.chains = set(scenario.chains())
        self.beliefs: dict[Chain, list[Belief]] = {c: [] for c in [TRUTH, *self.chains]}
        self.stays: list[Stay] = []
        self.events: dict[int, EventRecord] = {}
        self.told: list[Told] = []
        self.ledger = Ledger(dict(self.policy.authorities))  # `trust learned`

    def declare(self) -> None:
        """Take in agents declared after the start (its engine added them to the scenario
        first: tomc/engine/reference.py): their chains begin unknown."""
        for chain in self.scenario.chains():
            if chain not in self.chains:
                self.chains.add(chain)
                self.beliefs[chain] = []

    # ------------------------------------------------------------------ world

    def room_of(self, agent: str) -> Optional[str]:
        """The room `agent` is in now, or None."""
        return next((s.room for s in self.stays if s.agent == agent and s.until is None), None)

    def present(self, room: Optional[str]) -> list[str]:
        """The agents in `room` now."""
        return [s.agent for s in self.stays if s.room == room and s.until is None]

    def latest_exit(self, agent: Optional[str], room: Optional[str]) -> int:
        """The step of `agent`'s most recent exit from `room`; 0 if never (the earliest)."""
        return max((s.until for s in self.stays
                    if s.agent == agent and s.room == room and s.until is not None), default=0)

    def trusts(self, listener: str, speaker: Optional[str], key: str) -> bool:
        """trusts(L, S) under the policy's trust mode (docs/semantics.md sections 3 and 4)."""
        if self.policy.trust != "exit_order" or speaker is None:
            return True
        rooms = [b.room for b in self.open(TRUTH, key) if b.room is not None]
        key_room = min(rooms) if rooms else None
        return self.latest_exit(speaker, key_room) > self.latest_exit(listener, key_room)

    # ------------------------------------------------------------------ events

    def run(self) -> "ReferenceInterpreter":
        """Apply every event in step order; returns self."""
        for event in self.scenario.events:
            self.apply(event)
        return self

    def apply(self, event: AnyEvent) -> None:
        """Apply one event: the world changes, then the truth, then the routed chains; the
        event's family picks how (one method per family, table `_APPLY`)."""
        witnesses = _APPLY[type(event)](self, event)
        self.events[event.step] = EventRecord(event.step, event.kind, event.text, event.line,
                                              sorted(witnesses))

    def presence(self, event: Presence) -> list[str]:
        """Entering leaves the previous room silently, and (policy `reveal contents`) shows
        the values located in the room; exiting leaves the room."""
        if event.kind == "exit":
            for stay in self.stays:
                if stay.agent in event.agents and stay.room == event.room and stay.until is None:
                    stay.until = event.step
            return []
        for agent in event.agents:
            for stay in self.stays:
                if stay.agent == agent and stay.until is None:
                    stay.until = event.step
            self.stays.append(Stay(agent, event.room, event.step))
        present = self.present(event.room)
        if self.policy.reveal == "contents":
            facts = [Fact(b.key, b.value, self.policy.is_many(b.key), b.room)
                     for b in self.open_all(TRUTH)
                     if b.room == event.room and self.policy.visible(b.key)]
            self.route_observation(event, present, facts, truth=False)
        return present + list(event.peekers)

    def observation(self, event: Observation) -> list[str]:
        """A world change seen by everyone in its room (the actor alone, in no room)."""
        room = event.room if event.kind == "state" else self.room_of(event.agents[0])
        present = self.present(room) if room is not None else list(event.agents)
        fact = Fact(event.fact.key, event.fact.value, event.fact.many, room)
        self.route_observation(event, present, [fact], truth=True)
        return present + list(event.peekers)

    def quiet(self, event: Quiet) -> list[str]:
        """Nothing changes."""
        return []

    def route_observation(self, event: Observation | Presence, present: list[str],
                          facts: list[Fact], truth: bool) -> None:
        """Every chain an `on observe:` rule names adopts the facts. A chain is over a rule's
        role sets when its first agent perceived the event and each later one is thought to
        have: for `witnesses`, the agents `present` in the room, peekers but not distracted
        ones first, distracted ones but not peekers later (docs/language.md, "Peeking and
        distraction"); `peekers` and `distracted` add their agents to both positions."""
        if truth:
            for fact in facts:
                self.adopt(TRUTH, fact, event, True, "truth")
        peekers, distracted = set(event.peekers), set(event.distracted)
        first = {"witnesses": (set(present) - distracted) | peekers, "peekers": peekers,
                 "distracted": distracted}
        later = {"witnesses": set(present), "peekers": peekers, "distracted": distracted}
        section = self.policy.sections.get("observe")
        named: set[Chain] = set()  # a chain two rules name sees the event once (first rule)
        for rule in section.rules if section else []:
            heads = {a for name in rule.over for a in first[name]}
            members = {a for name in rule.over for a in later[name]}
            for chain in sorted(self.chains):
                if chain[0] in heads and set(chain[1:]) <= members and chain not in named:
                    named.add(chain)
                    for fact in facts:
                        self.adopt(chain, fact, event, True, rule.text)

    def listeners(self, event: Communication | Handoff) -> list[str]:
        """Who hears a communication, the speaker excluded."""
        speaker = event.speaker
        if event.kind == "says":
            heard = self.present(self.room_of(speaker))
        elif event.kind == "claim" and event.room is not None:
            heard = self.present(event.room)
        elif event.kind in ("tell", "handoff", "claim"):
            heard = list(event.listeners)  # named, or (claims to all) every other agent
        else:
            heard = list(self.scenario.agents)
        return [a for a in heard if a != speaker]

    def handed_over(self, event: Handoff) -> list[Fact]:
        """The facts of `handoff S -> R write`: what `ask handoff S -> R` includes now, with
        their sources (`via S`), authority, dates and rivals, then its endings (values S knows
        ended that S > R still holds), each ending the receiver's version as an ending does."""
        # Imported here: the view module reads this interpreter's types.
        from tomc.analysis.handoff import handed_over
        from tomc.reference.view import ReferenceView
        view = ReferenceView(self, event.step - 1)
        return [Fact(h.key, h.value, self.policy.is_many(h.key), None, h.support[0],
                     h.authority, h.published, h.valid_from, h.ended, None, h.valid_to,
                     support=h.support, rivals=h.rivals, about=h.about, known=h.known)
                for h in handed_over(view, event.speaker, event.listener, event.authority)]

    def communicate(self, event: Communication | Handoff) -> list[str]:
        if self.policy.trust == "learned":  # the source's standing is its authority
            who = event.source if isinstance(event, Communication) else event.speaker
            event = replace(event, authority=self.ledger.standing(who, event.step).value)
            if event.kind in ("claim", "retract") and not event.fact.many:
                self.ledger.record(event.step, event.fact.key, event.fact.value,
                                   event.source, event.fact.ended, event.fact.of)
        speaker = event.speaker
        heard = self.listeners(event)
        if isinstance(event, Handoff):
            facts = self.handed_over(event)
            # Exit order judges one key's room; a handoff carries several keys (handoff.cypher).
            trusted = self.policy.trust != "exit_order"
            believers = heard if trusted else []
        else:
            fact = event.fact
            facts = [Fact(fact.key, fact.value, fact.many, None, event.source,
                          event.authority, event.published,
                          event.valid_from or event.published or "", fact.ended, fact.of,
                          event.valid_to or "", about=event.about)]
            believers = [a for a in heard if self.trusts(a, speaker, fact.key)]
        if speaker is not None:
            # An ending passes on no value: who-told-whom follows values (explain).
            # A report tells what someone believes, not the value itself.
            self.told += [Told(speaker, listener, event.step, f.key, f.value)
                          for listener in heard for f in facts
                          if not f.ended and f.about is None and not f.known]
        authority_trust = self.policy.trust in ("authority", "learned")
        if event.kind == "claim":
            self.adopt(TRUTH, facts[0], event, not authority_trust, "truth")
        # Overheard or missed (docs/semantics.md section 3, "Peeking and distraction"): a
        # peeker may head a chain, never follow; a distracted listener may follow, not head.
        peekers = list(getattr(event, "peekers", ()))
        distracted = set(getattr(event, "distracted", ()))
        trusting = [k for k in peekers if self.trusts(k, speaker, facts[0].key)] if facts else []
        section = self.policy.sections.get(event.event_class)
        named: set[Chain] = set()  # a chain two rules name hears the event once (first rule)
        for rule in section.rules if section else []:
            if rule.over:
                sets = {"listeners": (heard, peekers), "believers": (believers, trusting),
                        "speaker": ([speaker] if speaker else [], [])}
                members = {a for s in rule.over for a in sets[s][0]}
                heads = {a for s in rule.over for a in [*sets[s][0], *sets[s][1]]}
                chains = [c for c in self.chains_over(members | heads, rule, speaker, heard)
                          if c[0] in heads - distracted and set(c[1:]) <= members]
            else:
                chains = [c for c in self.chains_on_path(rule, speaker, heard, believers)
                          if c[0] not in distracted]
                chains += self.overheard_on_path(rule, speaker, heard, believers, peekers,
                                                 trusting)
            for chain in chains:
                if chain == (speaker,) or chain in named:
                    continue  # S's own belief never changes because S said something
                named.add(chain)
                force = not authority_trust or (len(chain) >= 2 and chain[-1] == speaker)
                for fact in facts:
                    target = self.model_of(chain, fact.about)
                    if target is not None and not fact.known:
                        text = rule.text if fact.about is None or event.kind != "handoff" \
                            else f"hearsay: {rule.text}"
                        self.adopt(target, fact, event, force, text)
                for fact in facts:
                    if fact.about is None:
                        self.record_rivals(chain, fact, event)
        return ([speaker] if speaker else []) + heard + peekers  # peekers witnessed it too

    def model_of(self, chain: Chain, about: Optional[str]) -> Optional[Chain]:
        """Where a fact goes for a chain a rule names: the chain itself, or for a fact about
        X its model of X (`chain > X`), when the policy tracks it and X is not in it."""
        if about is None:
            return chain
        target = (*chain, about)
        return target if about not in chain and target in self.chains else None

    def record_rivals(self, chain: Chain, fact: Fact, event: AnyEvent) -> None:
        """A handed-over fact's rivals, each a contested claim against what the chain holds
        about the key now (its one current value: rivals exist only for cardinality one),
        unless that is the rival's own value."""
        for rival in fact.rivals:
            held = next(iter(self.open(chain, fact.key)), None)
            if held is not None and held.value != rival.value:
                held.contested.append(Contest(event.step, rival.value, rival.source,
                                              rival.authority, event.kind))

    def chains_over(self, members: set[str], rule: ast.Rule, speaker: Optional[str],
                    listeners: list[str]) -> list[Chain]:
        """Every chain made only of `members`, minus the one-agent chains of excepted roles."""
        excepted = set()
        for role in rule.excepted:
            excepted |= {(speaker,)} if role == "speaker" else {(a,) for a in listeners}
        return sorted(c for c in self.chains if set(c) <= members and c not in excepted)

    def chains_on_path(self, rule: ast.Rule, speaker: Optional[str], listeners: list[str],
                       believers: list[str]) -> list[Chain]:
        """The rule's chain of roles, once per listener that meets the rule's condition."""
        if "listener" not in rule.path:
            candidates = [tuple(speaker for _ in rule.path)]
        else:
            chosen = listeners
            if rule.condition is not None:
                chosen = [a for a in listeners if (a in believers) != rule.condition.negated]
            candidates = [tuple(a if role == "listener" else speaker for role in rule.path)
                          for a in chosen]
        return [c for c in candidates if c in self.chains]

    def overheard_on_path(self, rule: ast.Rule, speaker: Optional[str], listeners: list[str],
                          believers: list[str], peekers: list[str],
                          trusting: list[str]) -> list[Chain]:
        """A path rule's chains headed by a peeker K instead of its first role (K took in
        unseen what that role's agent did): `listener adopts` gives K, `listener > speaker`
        K > S, `speaker > listener` K > L. A trust condition is the head's (K's) when the
        rule's head is the listener, else the listener's in the chain."""
        out = []
        rest = rule.path[1:]
        for peeker in peekers:
            for listener in (listeners if "listener" in rest else [None]):
                if rule.condition is not None:
                    trusts = (peeker in trusting if rule.path[0] == "listener"
                              else listener is None or listener in believers)
                    if trusts == rule.condition.negated:
                        continue
                chain = (peeker, *(listener if r == "listener" else speaker for r in rest))
                if len(set(chain)) == len(chain) and chain in self.chains:
                    out.append(chain)
        return out

    # ------------------------------------------------------------------ resolution

    def open(self, chain: Chain, key: str) -> list[Belief]:
        """The chain's current (not superseded) beliefs about `key`."""
        return [b for b in self.beliefs[chain] if b.key == key and b.until is None]

    def open_all(self, chain: Chain) -> list[Belief]:
        return [b for b in self.beliefs[chain] if b.until is None]

    def adopt(self, chain: Chain, fact: Fact, event: AnyEvent, force: bool, rule: str) -> str:
        """Resolve `fact` into `chain` (docs/semantics.md section 4); returns the outcome."""
        if fact.ended:
            return self.end(chain, fact, event, force)
        current = [b for b in self.open(chain, fact.key)
                   if not fact.many or b.value == fact.value]
        held = current[0] if current else None
        if held is None:
            outcome = "adopt"
        elif held.value == fact.value:
            outcome = "corroborate"
        elif force or _outranks(fact, held, self.policy.ties):
            outcome = "supersede"
        elif _tied(fact, held) and self.policy.ties == "first":
            outcome = "ignore"
        else:
            outcome = "contest"
        if outcome == "corroborate":
            joined = [s for s in fact.sources() if s not in held.support]
            for source in joined:
                held.support.append(source)
                held.support_since.append(event.step)
                held.support_authority.append(fact.authority)
            held.claimed += [(s, fact.authority, fact.published) for s in fact.sources()]
            for rival in held.contested:  # what the new claim dominates is history now
                if rival.until is None and _dominates(fact.authority, fact.published,
                                                      rival.authority, rival.published):
                    rival.until = event.step
            outranks = _dated(fact, held) and _outranks(fact, held, "contested")
            if outranks:
                # The version ranks by its best claim: arrival order must not decide
                # whether a later rival finds it older (docs/semantics.md section 4).
                if not held.published_since:
                    held.published_since.append((held.since, held.published))
                held.published_since.append((event.step, fact.published))
                held.published = fact.published
            if joined or outranks:
                # A source already in the support adds nothing: under `trust learned` its
                # later, higher standing does not raise what it was adopted with.
                held.authority = max(held.authority, fact.authority)
        elif outcome == "ignore":
            pass  # a tie under `ties first`: the held value stays, the rival leaves no trace
        elif outcome == "contest":
            # Dominated by a claim of the held value: superseded on arrival, not disputed.
            held.contested.append(Contest(
                event.step, fact.value, fact.source, fact.authority, event.kind,
                fact.published, event.step if _beaten(fact, held) else None))
        else:
            if held is not None:
                # A successor valid from before the held value began: the held value
                # never held in valid time (an empty interval, never an inverted one).
                held.until, held.valid_to = event.step, max(fact.valid_from, held.valid_from)
            sources = list(fact.sources())
            authorities = [fact.authority] * len(sources)
            claimed = [(s, fact.authority, fact.published) for s in sources]
            keeps = held is not None and not force and _dated(fact, held)
            if keeps:  # the claims of v that had lost to b are v's now
                for rival in held.contested:
                    if rival.value == fact.value and rival.source is not None:
                        claimed.append((rival.source, rival.authority, rival.published))
                        if rival.source not in sources:
                            sources.append(rival.source)
                            authorities.append(rival.authority)
            belief = Belief(
                fact.key, fact.value, event.step, event.kind, fact.source, fact.authority,
                fact.published, fact.valid_from, fact.room, rule, fact.authority, sources,
                [event.step] * len(sources), authorities, claimed)
            if keeps:
                belief.contested = _dispute_kept(held, belief, event.step)
            self.beliefs[chain].append(belief)
        return outcome

    def end(self, chain: Chain, fact: Fact, event: AnyEvent, force: bool) -> str:
        """Resolve an ending into `chain` (docs/language.md "Endings", extending docs/semantics.md
        section 4): each current version it names is closed (knowledge time at this step,
        valid time at the ending's `valid_to`) when the ending outranks it as a value would,
        else the ending is recorded against it as contested (or, a tie under `ties first`,
        dropped). Returns the last outcome ("none" when the chain held nothing it names)."""
        outcome = "none"
        for held in self.open(chain, fact.key):
            if fact.value is not None and held.value != fact.value:
                continue
            if fact.of is not None and held.source != fact.of:
                continue
            if force or _outranks(fact, held, self.policy.ties):
                outcome = "close"
                held.until, held.valid_to = event.step, max(fact.valid_to, held.valid_from)
                held.ending = Ending(fact.source, fact.authority, fact.published,
                                     held.valid_to)
            elif _tied(fact, held) and self.policy.ties == "first":
                outcome = "ignore"
            else:
                outcome = "contest"
                held.contested.append(Contest(
                    event.step, ENDED, fact.source, fact.authority, event.kind,
                    fact.published, event.step if _beaten(fact, held) else None))
        return outcome

    # ------------------------------------------------------------------ reads

    def belief(self, chain: Chain, key: str, step: int) -> list[Belief]:
        """The versions `chain` held about `key` at `step` (knowledge time), by value."""
        held = [b for b in self.beliefs[chain] if b.key == key and b.since <= step
                and (b.until is None or b.until > step)]
        return sorted(held, key=lambda b: b.value)

    def valid_on(self, chain: Chain, key: str, step: int, date: str) -> list[Belief]:
        """Valid time: the versions adopted by `step` whose [valid_from, valid_to) holds
        `date` (docs/semantics.md section 4, "Two clocks"), by value, as known at `step`: an
        interval a later event closed is still open then (section 5.3)."""
        held = [b for b in self.beliefs[chain] if b.key == key and b.since <= step
                and b.valid_from <= date
                and (b.valid_to is None or b.until > step or date < b.valid_to)]
        return sorted(held, key=lambda b: b.value)

    def answer(self, query: QueryModel) -> Answer:
        """Evaluate an expect or ask like the FalkorDB engine does."""
        if query.on_date is not None:
            held = self.valid_on(query.chain, query.key, query.step, query.on_date)
        else:
            held = self.belief(query.chain, query.key, query.step)
        values = [b.value for b in held]
        provenance = []
        for b in held:
            e = self.events.get(b.since)
            if e:
                provenance.append(Provenance(e.step, e.kind, e.text, e.line, e.witnesses,
                                             b.source, b.support_at(query.step), b.rule))
        contested = sorted({c.value for b in held for c in b.disputed_at(query.step)})
        return Answer(query, values, provenance, contested)


    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        """Whether the procedure can run from the query's perspective: each step read like
        `answer` reads a belief (docs/language.md, "Procedures")."""
        steps = []
        for requirement in query.procedure.requires:
            if query.on_date is not None:
                held = self.valid_on(query.chain, requirement.key, query.step, query.on_date)
            else:
                held = self.belief(query.chain, requirement.key, query.step)
            values = [b.value for b in held]
            steps.append(StepAnswer(
                requirement, step_status(requirement, values), values,
                sorted({s for b in held for s in b.support_at(query.step)}),
                max((b.authority_at(query.step) for b in held), default=None),
                sorted({c.value for b in held for c in b.disputed_at(query.step)})))
        return ReadyAnswer(query, verdict_of([s.status for s in steps]), steps)


def _outranks(fact: Fact, held: Belief, ties: str) -> bool:
    """The supersede rows of the resolution table (docs/semantics.md section 4): higher
    authority, whatever the dates; equal authority and newer (undated: the later arrival);
    a tie (same authority, same date) under `ties newest`."""
    if fact.authority != held.authority:
        return fact.authority > held.authority
    return not _dated(fact, held) or fact.published > held.published or (
        ties == "newest" and fact.published == held.published)


def _dated(fact: Fact, held: Belief) -> bool:
    """Both sides have a publication time: the only case resolution can rank without
    arrival order (docs/semantics.md section 4, "Arrival order")."""
    return fact.published is not None and held.published is not None


def _dispute_kept(held: Belief, new: Belief, step: int) -> list[Contest]:
    """What a dated supersede keeps recorded against the new version: every rival of the
    version it closes (but those of the new value, whose claims are the new version's
    now) and that version's own claims, each source's latest (it dominates the source's
    others); each disputed only while no claim of the new version dominates it
    (docs/semantics.md section 4, "Dominance")."""
    def until(authority: int, published: Optional[str]) -> Optional[int]:
        beaten = any(_dominates(a, p, authority, published) for a, p in new.claims())
        return step if beaten else None
    latest: dict[Optional[str], tuple[int, Optional[str]]] = {}
    for source, authority, published in held.claimed:
        if source not in latest or (authority, published or "") > (
                latest[source][0], latest[source][1] or ""):
            latest[source] = (authority, published)
    kept = [replace(c, until=until(c.authority, c.published))
            for c in held.contested if c.value != new.value]
    return kept + [Contest(step, held.value, source, authority, held.kind, published,
                           until(authority, published))
                   for source, (authority, published) in latest.items()]


def _dominates(authority: int, published: Optional[str], other_authority: int,
               other_published: Optional[str]) -> bool:
    """A claim dominates another: both dated, its authority no lower and its date no
    earlier, and not both the same (that is a tie). Undated claims are ranked by arrival
    (the table), never by dominance (docs/semantics.md section 4, "Dominance")."""
    if published is None or other_published is None:
        return False
    if (authority, published) == (other_authority, other_published):
        return False
    return authority >= other_authority and published >= other_published


def _beaten(fact: Fact, held: Belief) -> bool:
    """`fact` loses to `held` and a claim of `held` dominates it: superseded on arrival,
    history, not a dispute."""
    return any(_dominates(a, p, fact.authority, fact.published) for a, p in held.claims())


def _tied(fact: Fact, held: Belief) -> bool:
    """Same authority and the same (known) date: the policy's `ties` decides."""
    return (fact.authority == held.authority and fact.published is not None
            and fact.published == held.published)


def run_reference(scenario: ScenarioModel) -> ReferenceInterpreter:
    """Interpret a checked scenario; returns the interpreter holding its final state."""
    return ReferenceInterpreter(scenario).run()


# How each event family changes the state (ReferenceInterpreter.apply).
_APPLY = {Presence: ReferenceInterpreter.presence, Observation: ReferenceInterpreter.observation,
          Communication: ReferenceInterpreter.communicate, Handoff: ReferenceInterpreter.communicate,
          Quiet: ReferenceInterpreter.quiet}
