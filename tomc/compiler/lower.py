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

from typing import Any, Callable, Optional, Sequence

from tomc.compiler.perspectives import MindPlan, Perspectives
from tomc.compiler.plan import WORLD, EventPlan, Plan, Statement, graph_names
from tomc.compiler.reads import Bindings
from tomc.compiler.routing import (Chain, Route, communication_routes, models_of,
                                   observation_routes, truth_adopts)
from tomc.compiler.templates import render
from tomc.search_text import words
from tomc.dsl.program import (AnyEvent, Communication, Handoff, Observation, Presence, Quiet,
                              ScenarioModel)

FactRow = dict[str, Any]


class Compiler:
    """Lowers one scenario's setup, declarations and events, in order.

    `perspectives` holds which keys each chain owns after the events lowered so far; a live
    session keeps its compiler for the scenario's life.
    """

    def __init__(self, scenario: ScenarioModel, perspectives: Optional[Perspectives] = None):
        self.scenario = scenario
        self.perspectives = perspectives or Perspectives(scenario.chains())
        self._chains: tuple[tuple, list[Chain]] = ((), [])

    def chains(self) -> list[Chain]:
        """The scenario's chains (ScenarioModel.chains), kept while its agents and depth stay
        the same: a 16-agent scenario at depth 3 has 3,616, and every routed event asks."""
        shape = (tuple(self.scenario.agents), self.scenario.policy.depth)
        if self._chains[0] != shape:
            self._chains = (shape, self.scenario.chains())
        return self._chains[1]

    def accept(self, plan: EventPlan) -> None:
        """Record what a committed event made each chain own (tomc/compiler/perspectives.py);
        the next event is compiled against it."""
        self.perspectives.accept(plan.perspectives)

    # ---------------------------------------------------------------- setup and declarations

    def setup(self, rev: int = 0, text: str = "") -> list[Statement]:
        """The world graph and one mind graph per agent, each chain a perspective."""
        s = self.scenario
        origin = (s.line, f"scenario {s.name}")
        world = Statement(WORLD, "setup_world.cypher", render("setup_world.cypher"),
                          {"name": s.name, "policy": s.policy.name, "agents": s.agents,
                           "rooms": s.rooms, "rev": rev, "text": text}, origin)
        return [world, *self._minds({c: [] for c in s.chains()}, origin, 0)]

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
        asked for (`reads_for`); `rev` is the revision it commits as (default: its step)."""
        lowering = _LOWERING[type(event)]
        return lowering(self, event, bindings or Bindings(), event.step if rev is None else rev)

    def _presence(self, event: Presence, bindings: Bindings, rev: int) -> EventPlan:
        world = self._world(event, "presence.cypher", rev, {"actors": list(event.agents),
                                                            "room": event.room})
        if event.kind != "enter" or self.scenario.policy.reveal != "contents":
            return self._plan(event, world, {}, ())
        facts = [_fact(r["key"], r["value"], r["many"], r["room"]) for r in bindings.revealed
                 if self.scenario.policy.visible(r["key"])]  # `reveal contents except P`
        routes = observation_routes(self.scenario.policy, self.chains(), event.witnesses,
                                    event.peekers, event.distracted)
        return self._routed(event, world, routes, facts, ("revealed",))

    def _observation(self, event: Observation, bindings: Bindings, rev: int) -> EventPlan:
        fact = event.fact
        facts = [_fact(fact.key, fact.value, fact.many, event.room)]
        world = self._world(event, "observation.cypher", rev, {"facts": facts, "truth": True})
        routes = observation_routes(self.scenario.policy, self.chains(), event.witnesses,
                                    event.peekers, event.distracted)
        return self._routed(event, world, routes, facts, ())

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
                            {"facts": facts, "truth": truth, "speaker": event.speaker,
                             "listeners": list(event.listeners)},
                            told=event.speaker is not None and bool(event.listeners)
                            and not fact.ended and event.about is None,
                            truth=truth is not None, ended=fact.ended)
        exit_order = policy.trust == "exit_order"
        # Peekers are judged like listeners: do they trust the speaker?
        believers = (bindings.believers if exit_order
                     else [*event.listeners, *event.peekers])
        routes = communication_routes(policy, self.chains(), event, believers)
        if event.about is not None:  # a report: each chain's model of X takes it instead
            routes = models_of(routes, event.about, self.chains())
        return self._routed(event, world, routes, facts, ("believers",) if exit_order else ())

    def _handoff(self, event: Handoff, bindings: Bindings, rev: int) -> EventPlan:
        facts = [_fact(h["key"], h["value"], h["many"], None, h["support"][0], h["authority"],
                       h["published"], h["valid_from"], support=h["support"])
                 for h in bindings.handed if not h["ended"] and h["about"] is None]
        # Hearsay (what S thinks X believes) goes to each named chain's model of X, tagged
        # with X so that mind.cypher resolves it there only.
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
        # `n` keeps two equal rivals (one source contesting twice) two rows: contest.cypher
        # groups by row, and each is a contested claim of its own, as in the reference.
        rivals = [{"key": key, "n": n, **rival}
                  for n, (key, rival) in enumerate((h["key"], r) for h in bindings.handed
                                                   for r in h["rivals"])]
        world = self._world(event, "communication.cypher", rev,
                            {"facts": facts, "truth": None, "speaker": event.speaker,
                             "listeners": [event.listener]},
                            told=bool(facts), truth=False)
        # Exit order judges one key's room; a handoff carries several keys: the receiver
        # does not take it as trusted (docs/language.md, "handoff ... write").
        believers = [] if self.scenario.policy.trust == "exit_order" else [event.listener]
        routes = communication_routes(self.scenario.policy, self.chains(), event,
                                      believers)
        return self._routed(event, world, routes, facts, ("handed",), rivals, endings, hearsay)

    def _quiet(self, event: Quiet, bindings: Bindings, rev: int) -> EventPlan:
        return self._plan(event, self._world(event, "quiet.cypher", rev, {}), {}, ())

    # ---------------------------------------------------------------- parts

    def _world(self, event: AnyEvent, template: str, rev: int, params: dict,
               **context) -> Statement:
        base = {"step": event.step, "rev": rev, "kind": event.kind, "text": event.text,
                "words": words(event.text), "line": event.line, "witnesses": list(event.witnesses), "minds": [],
                "ties": self.scenario.policy.ties}
        return Statement(WORLD, template, render(template, kind=event.kind, **context),
                         {**base, **params}, (event.line, event.text))

    def _routed(self, event: AnyEvent, world: Statement, routes: Sequence[Route],
                facts: list[FactRow], bound: tuple[str, ...],
                rivals: Sequence[FactRow] = (), endings: Sequence[FactRow] = (),
                hearsay: Optional[dict[str, list[FactRow]]] = None) -> EventPlan:
        facts = [*facts, *endings]
        keys = [f["key"] for f in facts]
        plans = [self.perspectives.plan(routes, keys)] if facts else []
        models: set[Chain] = set()  # the chains hearsay goes to (each ends with its X)
        for agent, about in (hearsay or {}).items():
            moved = models_of(routes, agent, self.chains(), "hearsay: ")
            models |= {r.chain for r in moved}
            plans.append(self.perspectives.plan(moved, [f["key"] for f in about]))
            facts += about
        return self._plan(event, world, _merged(plans), bound, facts, rivals, models)

    def _plan(self, event: AnyEvent, world: Statement, plans: dict[str, MindPlan],
              bound: tuple[str, ...], facts: Optional[list[FactRow]] = None,
              rivals: Sequence[FactRow] = (), models: frozenset | set = frozenset()
              ) -> EventPlan:
        minds = [a for a in self.scenario.agents if a in plans]
        world.params["minds"] = minds
        plan = EventPlan(event.step, event.line, event.text, [world], tuple(minds), bound,
                         plans)
        origin = (event.line, event.text)
        for agent in minds:
            mind = plans[agent]
            if mind.copies:
                plan.statements.append(Statement(
                    agent, "copy.cypher", render("copy.cypher"),
                    {"step": event.step, "copies": [{"p": list(c.chain), "source": list(c.source),
                                                     "key": c.key} for c in mind.copies]},
                    origin, links=True))
            # Values first, then endings (a handoff may carry both: mind.cypher).
            values = [f for f in facts or () if not f.get("ended", False)]
            ends = [f for f in facts or () if f.get("ended", False)]
            plan.statements.append(Statement(
                agent, "mind.cypher", render("mind.cypher", values=bool(values),
                                             ended=bool(ends)),
                {"step": event.step, "kind": event.kind, "text": event.text,
                 "line": event.line, "witnesses": list(event.witnesses), "facts": values,
                 "ends": ends,
                 "ties": self.scenario.policy.ties,
                 "writes": [{"p": list(w.chain), "rule": w.rule, "force": w.force,
                             "keys": list(w.keys),
                             "about": w.chain[-1] if w.chain in models else None}
                            for w in mind.writes]},
                origin, links=True))
            direct = [w for w in mind.writes if w.chain not in models]
            if rivals and direct:  # a handoff's caveats, contested at the receiver
                plan.statements.append(Statement(
                    agent, "contest.cypher", render("contest.cypher"),
                    {"step": event.step, "kind": event.kind, "rivals": list(rivals),
                     "writes": [{"p": list(w.chain), "keys": list(w.keys)}
                                for w in direct]},
                    origin, links=True))
        return plan


def _fact(key: str, value: str, many: bool, room: Optional[str], source: Optional[str] = None,
          authority: int = 0, published: Optional[str] = None, valid_from: str = "",
          support: Optional[Sequence[str]] = None) -> FactRow:
    """A fact as the templates take it (resolve.cypher's `f`): `support` lists the sources
    it comes with (its one source, or a handed-over fact's `SOURCE via S`); an ending
    (`ended`) also has `of` and `valid_to` (resolve_ended.cypher); `words` is what search
    matches (tomc/search_text.py)."""
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
