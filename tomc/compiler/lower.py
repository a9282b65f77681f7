"""Checked scenario -> statements: each event becomes one world statement, then, for each
mind graph it changes, the copies and writes of tomc/compiler/perspectives.py (docs/semantics.md
sections 2-4).

A `Compiler` follows one scenario event by event, because what an event writes depends on
what the events before it made each chain own. Most events are compiled from the checked
program alone; three need a read of the graphs first (tomc/compiler/reads.py): what entering
reveals (`reveal contents`), who trusts the speaker under `trust exit_order`, and what a
handoff sends. The caller reads those, then passes them in as `bindings`.

One table maps each event family (tomc/dsl/program.py) to its lowering: adding an event
kind touches one place here, one in the reference interpreter and one template.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence

from tomc.compiler.perspectives import MindPlan, Perspectives
from tomc.compiler.plan import WORLD, EventPlan, Plan, Statement, graph_names
from tomc.compiler.reads import Bindings
from tomc.compiler.resolve import Changes, Held, Resolution
from tomc.compiler.routing import (Chain, Models, Routing, communication_routing,
                                   observation_routing, truth_adopts)
from tomc.compiler.standing import Standings
from tomc.compiler.templates import render
from tomc.search_text import words
from tomc.dsl.program import (AnyEvent, Communication, Handoff, Observation, Presence, Quiet,
                              ScenarioModel)

FactRow = dict[str, Any]
# A memory's world graph's range indexes, by label: the template that makes each, so that a
# write or read finds what it asks by key, never by a walk of the memory's history
# (told.cypher, read_applied.cypher; docs/storage.md, "What each event costs").
WORLD_INDEXES = {"Heard": "index_heard.cypher", "Event": "index_events.cypher",
                 "Declaration": "index_declarations.cypher"}


class Compiler:
    """Lowers one scenario's setup, declarations and events, in order.

    `perspectives` holds which keys each chain owns after the events lowered so far; a live
    session keeps its compiler for the scenario's life.
    """

    def __init__(self, scenario: ScenarioModel, perspectives: Optional[Perspectives] = None,
                 held: Optional[Held] = None):
        self.scenario = scenario
        self.perspectives = perspectives or Perspectives(scenario.chains())
        self.held = held or Held()
        self.standings = Standings(scenario)  # `trust learned`: each source's standing

    def accept(self, plan: EventPlan) -> None:
        """Record what a committed event made each chain own (tomc/compiler/perspectives.py)
        and the versions it left open (tomc/compiler/resolve.py); the next event is compiled
        against them."""
        self.perspectives.accept(plan.perspectives)
        self.held.accept(plan.held)

    # ---------------------------------------------------------------- setup and declarations

    def setup(self, rev: int = 0, text: str = "") -> list[Statement]:
        """The world graph and one mind graph per agent, each chain a perspective."""
        s = self.scenario
        origin = (s.line, f"scenario {s.name}")
        world = Statement(WORLD, "setup_world.cypher", render("setup_world.cypher"),
                          {"name": s.name, "policy": s.policy.name, "agents": s.agents,
                           "rooms": s.rooms, "rev": rev, "text": text}, origin)
        return [world, *self._minds({c: [] for c in s.chains()}, origin, 0)]

    def indexes(self) -> list[Statement]:
        """The world graph's indexes (WORLD_INDEXES): what a memory, which lives long,
        makes with its world graph; a scenario run from a file is small and short-lived,
        and goes without (each index costs a graph ~150 KB: docs/falkordb.md check 7.6)."""
        origin = (self.scenario.line, f"scenario {self.scenario.name}")
        return [Statement(WORLD, template, render(template), {}, origin)
                for template in WORLD_INDEXES.values()]

    def declare(self, agents: list[str], rooms: list[str], rev: int, text: str,
                origin: tuple[int, str]) -> list[Statement]:
        """Statements for a later `agents` / `rooms` line: the new nodes, and a perspective
        for every chain the new agents make possible."""
        owns = self.perspectives.add(self.scenario.chains())
        world = Statement(WORLD, "declare_world.cypher", render("declare_world.cypher"),
                          {"agents": agents, "rooms": rooms, "rev": rev, "text": text}, origin)
        return [world, *self._minds(owns, origin, len(self.scenario.events))]

    def _minds(self, owns: dict[Chain, list[str]], origin: tuple[int, str],
               step: int) -> list[Statement]:
        """One setup_mind statement per agent that starts one of the chains, parents first."""
        out = []
        for agent in self.scenario.agents:
            own = [{"agents": list(c), "owns": owns[c]}
                   for c in sorted(owns, key=len) if c[0] == agent]
            if own:
                out.append(Statement(agent, "setup_mind.cypher", render("setup_mind.cypher"),
                                     {"chains": own, "step": step}, origin))
        return out

    # ---------------------------------------------------------------- events

    def event(self, event: AnyEvent, bindings: Optional[Bindings] = None,
              rev: Optional[int] = None) -> EventPlan:
        """The statements of one event; `bindings` are the reads tomc/compiler/reads.py
        asked for (`reads_for`); `rev` is the revision it commits as (default: its step).
        Under `trust learned` the event carries its source's standing as its authority."""
        event = self.standings.judged(event)
        lowering = _LOWERING[type(event)]
        return lowering(self, event, bindings or Bindings(), event.step if rev is None else rev)

    def _presence(self, event: Presence, bindings: Bindings, rev: int) -> EventPlan:
        world = self._world(event, "presence.cypher", rev, {"actors": list(event.agents),
                                                            "room": event.room})
        if event.kind != "enter" or self.scenario.policy.reveal != "contents":
            return self._plan(event, world, {}, (), rev)
        facts = [_fact(r["key"], r["value"], r["many"], r["room"]) for r in bindings.revealed
                 if self.scenario.policy.visible(r["key"])]  # `reveal contents except P`
        routing = observation_routing(self.scenario.policy, self.scenario.agents,
                                      event.witnesses, event.peekers, event.distracted)
        return self._routed(event, world, routing, facts, ("revealed",), rev)

    def _observation(self, event: Observation, bindings: Bindings, rev: int) -> EventPlan:
        fact = event.fact
        facts = [_fact(fact.key, fact.value, fact.many, event.room)]
        world = self._world(event, "observation.cypher", rev, {})
        routing = observation_routing(self.scenario.policy, self.scenario.agents,
                                      event.witnesses, event.peekers, event.distracted)
        return self._routed(event, world, routing, facts, (), rev, truth=True)

    def _communication(self, event: Communication, bindings: Bindings, rev: int) -> EventPlan:
        policy = self.scenario.policy
        fact = event.fact
        facts = [_fact(fact.key, fact.value, fact.many, None, event.source, event.authority,
                       event.published, event.valid_from or event.published or "")]
        if fact.ended:
            facts[0].update(ended=True, of=fact.of, valid_to=event.valid_to or "")
        truth = truth_adopts(event, policy)
        # An ending passes on no value: who-told-whom (TOLD edges) follows values.
        world = self._world(event, "communication.cypher", rev,
                            {"facts": facts, "speaker": event.speaker,
                             "listeners": list(event.listeners)},
                            told=event.speaker is not None and bool(event.listeners)
                            and not fact.ended and event.about is None,
                            truth=truth is not None)
        exit_order = policy.trust == "exit_order"
        # Peekers are judged like listeners: do they trust the speaker?
        believers = (bindings.believers if exit_order
                     else [*event.listeners, *event.peekers])
        routing = communication_routing(policy, self.scenario.agents, event, believers)
        if event.about is not None:  # a report: each chain's model of X takes it instead
            routing = Models(routing, event.about)
        return self._routed(event, world, routing, facts, ("believers",) if exit_order else (),
                            rev, truth=truth)

    def _handoff(self, event: Handoff, bindings: Bindings, rev: int) -> EventPlan:
        facts = [_fact(h["key"], h["value"], h["many"], None, h["support"][0], h["authority"],
                       h["published"], h["valid_from"], support=h["support"])
                 for h in bindings.handed
                 if not h["ended"] and h["about"] is None and not h["known"]]
        # Hearsay (what S thinks X believes) goes to each named chain's model of X, tagged
        # with X so that only those chains resolve it.
        hearsay: dict[str, list[FactRow]] = {}
        for h in bindings.handed:
            if h["about"] is not None:
                hearsay.setdefault(h["about"], []).append({**_fact(
                    h["key"], h["value"], h["many"], None, h["support"][0], h["authority"],
                    h["published"], h["valid_from"], support=h["support"]),
                    "about": h["about"]})
        # The endings come after the values (a cardinality-one key carries one or the
        # other: tomc/analysis/handoff.py `endings_to_send`), as in the reference.
        endings = [{**_fact(h["key"], h["value"], h["many"], None, h["support"][0],
                            h["authority"], h["published"], h["valid_from"],
                            support=h["support"]),
                    "ended": True, "of": None, "valid_to": h["valid_to"]}
                   for h in bindings.handed if h["ended"]]
        rivals = [{"key": h["key"], **rival} for h in bindings.handed for rival in h["rivals"]]
        world = self._world(event, "communication.cypher", rev,
                            {"facts": facts, "speaker": event.speaker,
                             "listeners": [event.listener]},
                            told=bool(facts), truth=False)
        # Exit order judges one key's room; a handoff carries several keys: the receiver
        # does not take it as trusted (docs/language.md, "handoff ... write").
        believers = [] if self.scenario.policy.trust == "exit_order" else [event.listener]
        routing = communication_routing(self.scenario.policy, self.scenario.agents, event,
                                        believers)
        return self._routed(event, world, routing, facts, ("handed",), rev, rivals, endings,
                            hearsay)

    def _quiet(self, event: Quiet, bindings: Bindings, rev: int) -> EventPlan:
        return self._plan(event, self._world(event, "quiet.cypher", rev, {}), {}, (), rev)

    # ---------------------------------------------------------------- parts

    def _world(self, event: AnyEvent, template: str, rev: int, params: dict,
               **context) -> "WorldPart":
        base = {"step": event.step, "rev": rev, "kind": event.kind, "text": event.text,
                "words": words(event.text), "line": event.line,
                "witnesses": list(event.witnesses), "minds": []}
        return WorldPart(template, {**base, **params}, context)

    def _routed(self, event: AnyEvent, world: "WorldPart", routing: Routing | Models,
                facts: list[FactRow], bound: tuple[str, ...], rev: int,
                rivals: Sequence[FactRow] = (), endings: Sequence[FactRow] = (),
                hearsay: Optional[dict[str, list[FactRow]]] = None,
                truth: Optional[bool] = None) -> EventPlan:
        facts = [*facts, *endings]
        # A handoff's caveat about a value the receiver holds has rivals and no fact: its
        # key is written too, so the contested claim goes to each chain's own version.
        keys = list(dict.fromkeys([*(f["key"] for f in facts), *(r["key"] for r in rivals)]))
        plans = [self.perspectives.plan(routing, keys)] if keys else []
        movers = {agent: Models(routing, agent, "hearsay: ") for agent in hearsay or {}}
        for agent, about in (hearsay or {}).items():
            plans.append(self.perspectives.plan(movers[agent], [f["key"] for f in about]))
            facts += about
        merged = _merged(plans)
        # The chains hearsay goes to: each chain the moved rules name (it ends with its X).
        models = {w.chain for mind in merged.values() for w in mind.writes
                  if w.chain[-1] in movers and movers[w.chain[-1]].route(w.chain)}
        return self._plan(event, world, merged, bound, rev, facts, rivals, truth, models)

    def _plan(self, event: AnyEvent, world: "WorldPart", plans: dict[str, MindPlan],
              bound: tuple[str, ...], rev: int, facts: Sequence[FactRow] = (),
              rivals: Sequence[FactRow] = (), truth: Optional[bool] = None,
              models: frozenset | set = frozenset()) -> EventPlan:
        """The event's statements: the world's, then one per mind graph it writes, each
        carrying what resolution (tomc/compiler/resolve.py) decided for its chains; `truth`
        says whether the truth takes the facts outright (True), by the table (False) or
        not at all (None). Each written chain takes the values, then the endings (a
        handoff may carry both); hearsay (a fact `about` X) goes only to the chains of
        `models` that end with X, and the other values and the endings only to the other
        chains."""
        minds = [a for a in self.scenario.agents if a in plans]
        world.params["minds"] = minds
        truth_changes = Changes()
        witnesses = list(event.witnesses)
        resolution = Resolution(self.held, rev, self.scenario.policy.ties, facts)
        if truth is not None:
            for fact in facts:
                resolution.resolve((), fact, truth, "truth")
            truth_changes = resolution.changes.pop(None, Changes())
            world.params.update(truth_changes.params(), stored=resolution.stored)
        # Copies first: a chain copies its owner's history as it was before the event.
        for agent in minds:
            for c in plans[agent].copies:
                resolution.copy(c.chain, c.source, c.key)
        values = [f for f in facts if not f.get("ended")]
        ends = [f for f in facts if f.get("ended")]
        for agent in minds:
            writes = plans[agent].writes
            for w in writes:
                about = w.chain[-1] if w.chain in models else None
                for fact in values:
                    if fact["key"] in w.keys and fact.get("about") == about:
                        resolution.resolve(w.chain, fact, w.force, w.rule)
            for w in writes:  # an ending is the sender's own: never a model's hearsay
                for fact in ends if w.chain not in models else ():
                    if fact["key"] in w.keys:
                        resolution.resolve(w.chain, fact, w.force, w.rule)
            for w in writes:  # a handoff's caveats, contested at the receiver
                for rival in rivals if w.chain not in models else ():
                    if rival["key"] in w.keys:
                        resolution.rival(w.chain, rival)
        origin = (event.line, event.text)
        statement = Statement(WORLD, world.template,
                              render(world.template, kind=event.kind, **world.context,
                                     **truth_changes.parts()), world.params, origin)
        plan = EventPlan(event.step, event.line, event.text, [statement], tuple(minds), bound,
                         plans, resolution.changed)
        for agent in minds:
            changes = resolution.changes.get(agent, Changes())
            if changes.copies:
                plan.statements.append(Statement(
                    agent, "copy.cypher", render("copy.cypher"),
                    {"step": event.step, "copies": changes.copies}, origin, links=True))
            plan.statements.append(Statement(
                agent, "mind.cypher", render("mind.cypher", **changes.parts()),
                {"step": event.step, "kind": event.kind, "text": event.text,
                 "line": event.line, "witnesses": witnesses, "stored": resolution.stored,
                 **changes.params()},
                origin, links=True))
        return plan


class WorldPart(NamedTuple):
    """An event's world statement before resolution: rendered once the truth's changes are
    known (write.cypher renders only the parts they use)."""

    template: str
    params: dict
    context: dict


def _fact(key: str, value: str, many: bool, room: Optional[str], source: Optional[str] = None,
          authority: int = 0, published: Optional[str] = None, valid_from: str = "",
          support: Optional[Sequence[str]] = None) -> FactRow:
    """A fact as resolution takes it (tomc/compiler/resolve.py): `support` lists the sources
    it comes with (its one source, or a handed-over fact's `SOURCE via S`); an ending
    (`ended`) also has `of` and `valid_to`; `words` is what search matches
    (tomc/search_text.py)."""
    if support is None:
        support = [source] if source is not None else []
    return {"key": key, "value": value, "many": many, "room": room, "source": source,
            "support": list(support), "authority": authority, "published": published,
            "valid_from": valid_from, "words": words(key, value, source)}


def _merged(plans: Sequence[dict[str, MindPlan]]) -> dict[str, MindPlan]:
    """Several plans of one event (a handoff's values, and its hearsay about each agent) as
    one: each mind's copies (once each: two plans may copy the same history) and writes."""
    out: dict[str, MindPlan] = {}
    for plans_of in plans:
        for agent, mind in plans_of.items():
            into = out.setdefault(agent, MindPlan())
            into.copies += [c for c in mind.copies if c not in into.copies]
            into.writes += mind.writes
    return out


# How each event family is lowered (Compiler.event).
_LOWERING: dict[type, Callable[..., EventPlan]] = {
    Presence: Compiler._presence, Observation: Compiler._observation,
    Communication: Compiler._communication, Handoff: Compiler._handoff, Quiet: Compiler._quiet,
}


def compile_scenario(scenario: ScenarioModel,
                     bindings: Callable[[AnyEvent], Bindings] = lambda event: Bindings(),
                     prefix: str = "tom") -> Plan:
    """The whole plan of one scenario (what `tomc compile` prints). Events that read the
    graphs first take their `bindings` from the given function (`tomc compile` uses the
    reference interpreter's state at that step)."""
    compiler = Compiler(scenario)
    events = []
    for event in scenario.events:
        events.append(compiler.event(event, bindings(event)))
        compiler.accept(events[-1])
    return Plan(scenario.name, graph_names(scenario.name, scenario.agents, prefix),
                compiler.setup(), events)
