"""Checked scenario -> Plan: each event becomes a world write, then the truth update, then
one statement per routing rule of its policy section (SEMANTICS.md sections 2-4).

The routing rules come from the policy file: this module only maps each rule's roles to
Cypher through the fixed tables in `templates.py`, one template instance per rule.
"""

from __future__ import annotations

from typing import Optional

from tomc.compiler.plan import EventPlan, Plan, Statement, graph_names
from tomc.compiler.templates import (CONDITION_EXPR, FORCE_EXPR, ROLE_EXPR, ROLE_SETS, SET_EXPR,
                                     render)
from tomc.dsl import ast
from tomc.program import EventModel, ScenarioModel

_WORLD_TEMPLATE = {"enter": "enter.cypher", "exit": "exit.cypher", "state": "observe.cypher",
                   "move": "observe.cypher", "set": "observe.cypher", "tell": "communicate.cypher",
                   "says": "communicate.cypher", "announce": "communicate.cypher",
                   "claim": "communicate.cypher", "handoff": "handoff.cypher",
                   "wait": "quiet.cypher", "noop": "quiet.cypher"}


def lower(scenario: ScenarioModel, prefix: str = "tom") -> Plan:
    """Compile one checked scenario into its plan; graph names start with `prefix`."""
    world, mind_prefix = graph_names(scenario.name, prefix)
    return Plan(scenario=scenario.name, setup=_setup(scenario),
                events=[_event(scenario, e) for e in scenario.events],
                world_graph=world, mind_graph_prefix=mind_prefix, agents=list(scenario.agents))


def lower_events(scenario: ScenarioModel, events: list[EventModel]) -> list[EventPlan]:
    """The statements of `events` alone, for graphs that already hold the events before
    them: a live session's next event, or a simulated plan on forks."""
    return [_event(scenario, e) for e in events]


def lower_declarations(scenario: ScenarioModel, agents: list[str], rooms: list[str],
                       chains: list[tuple[str, ...]], origin: tuple[int, str]) -> list[Statement]:
    """Statements that add agents, rooms and the new chains they make possible (a live
    session's later `agents`/`rooms` line) to existing graphs."""
    statements = [Statement("world", render("declare.cypher"),
                            {"agents": agents, "rooms": rooms}, "declare.cypher", origin)]
    return statements + _minds(scenario, chains, origin)


def _setup(scenario: ScenarioModel) -> list[Statement]:
    origin = (scenario.line, f"scenario {scenario.name}")
    setup = [Statement("world", render("setup_world.cypher"),
                       {"agents": scenario.agents, "rooms": scenario.rooms},
                       "setup_world.cypher", origin)]
    return setup + _minds(scenario, scenario.chains(), origin)


def _minds(scenario: ScenarioModel, chains: list[tuple[str, ...]],
           origin: tuple[int, str]) -> list[Statement]:
    """One setup_mind statement per agent that starts one of `chains`."""
    out = []
    for agent in scenario.agents:
        own = [list(c) for c in chains if c[0] == agent]
        if own:
            out.append(Statement("mind", render("setup_mind.cypher"),
                                 {"chains": own, "agent": agent}, "setup_mind.cypher", origin,
                                 minds=("agent",)))
    return out


def _audience(event: EventModel) -> str:
    if event.kind == "says":
        return "speaker_room"
    if event.kind == "tell" or event.listeners is not None:
        return "named"
    return "room" if event.room is not None else "all"


def _event(scenario: ScenarioModel, event: EventModel) -> EventPlan:
    policy = scenario.policy
    origin = (event.line, event.text)
    plan = EventPlan(event.step, event.line, event.text)
    base = {"step": event.step, "kind": event.kind, "text": event.text, "line": event.line,
            "actors": list(event.agents)}
    template = _WORLD_TEMPLATE[event.kind]
    context = {"kind": event.kind}
    params = dict(base)
    if event.kind == "handoff":
        # What to send depends on the sender's beliefs when the event runs: read them first.
        plan.statements.append(Statement(
            "mind", render("handoff_facts.cypher"),
            {"speaker": event.speaker, "listener": event.listeners[0],
             "authority": event.authority}, "handoff_facts.cypher", origin,
            minds=("speaker",), binds=True))
        context["trust"] = policy.trust
        params.update(speaker=event.speaker, listener=event.listeners[0])
    elif template in ("enter.cypher", "exit.cypher"):
        params["room"] = event.room
    elif template == "observe.cypher":
        params.update(room=event.room if event.kind == "state" else None, key=event.key,
                      value=event.value, many=event.many)
    elif template == "communicate.cypher":
        context.update(audience=_audience(event), trust=policy.trust)
        params.update(speaker=event.speaker, key=event.key, value=event.value, room=event.room,
                      listeners=list(event.listeners or ()))
    plan.statements.append(Statement("world", render(template, **context), params, template,
                                     origin, binds=True,
                                     bound=("facts",) if event.kind == "handoff" else ()))
    if template in ("communicate.cypher", "handoff.cypher"):
        plan.statements.append(Statement("world", render("mark_first_tells.cypher"),
                                         {"step": event.step}, "mark_first_tells.cypher",
                                         origin))

    section_name = event.event_class
    if section_name is None:
        return plan
    section = policy.sections.get(section_name)
    if section_name == "enter":
        if policy.reveal != "contents":
            return plan
        plan.statements.append(Statement("world", render("reveal.cypher"), {"room": event.room},
                                         "reveal.cypher", origin, binds=True))
        section = policy.sections.get("observe")
    communication = section_name in ("tell", "announce", "claim")
    step = {"step": event.step, "kind": event.kind}
    if communication:
        step["speaker"] = event.speaker
    if communication and event.kind != "handoff":
        step["facts"] = [{"key": event.key, "value": event.value, "many": event.many,
                          "room": None, "source": event.source, "authority": event.authority,
                          "published": event.published,
                          "valid_from": event.valid_from or event.published or ""}]
    if section_name in ("observe", "enter") or event.kind == "claim":
        force = "always" if not communication or policy.trust != "authority" else "never"
        plan.statements.append(Statement(
            "world", render("route_truth.cypher", force=FORCE_EXPR[force]),
            {**step, "rule": "truth"},
            "route_truth.cypher", origin, bound=() if communication else ("facts",)))
    for rule in section.rules if section else []:
        plan.statements.append(_route(rule, step, communication, policy.trust, origin,
                                      facts_bound=event.kind == "handoff"))
    return plan


def _route(rule: ast.Rule, params: dict, communication: bool, trust: str,
           origin: tuple[int, str], facts_bound: bool) -> Statement:
    force = "always"
    if communication and trust == "authority":
        force = "speaker_chain"
    common = {"rule_text": rule.text, "communication": communication,
              "force": FORCE_EXPR[force]}
    if rule.over:
        members = " + ".join(SET_EXPR[s] for s in rule.over)
        cypher = render("route_over.cypher", members=members, members_text=" + ".join(rule.over),
                        excepted=rule.excepted, role_sets=ROLE_SETS, **common)
        minds = tuple(rule.over)
        bound = tuple(s for s in rule.over if s != "speaker")
        template = "route_over.cypher"
    else:
        negated: Optional[bool] = rule.condition.negated if rule.condition else None
        condition = (f"if {'not ' if negated else ''}trusts(listener, speaker)"
                     if rule.condition else None)
        cypher = render("route_path.cypher", path=rule.path,
                        path_exprs=[ROLE_EXPR[r] for r in rule.path], condition=condition,
                        condition_expr=CONDITION_EXPR[negated], **common)
        minds = ("listeners",) if rule.path[0] == "listener" else ("speaker",)
        bound = ("listeners",) + (("believers",) if rule.condition else ())
        if "listener" not in rule.path:
            bound = ()
        template = "route_path.cypher"
    if not communication or facts_bound:
        bound = tuple(dict.fromkeys((*bound, "facts")))
    return Statement("mind", cypher, {**params, "rule": common["rule_text"]}, template, origin,
                     minds=minds, bound=bound)
