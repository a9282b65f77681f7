"""Hypothesis strategies for .tom ASTs: generated scenarios and policies.

The strategies build `ast.File` values directly (not text), and every file they build is
valid for the checker too: names are declared before use, an agent exits only the room it
is in, moves and `says` come only from an agent in a room, a tell has two distinct agents,
a chain names pairwise distinct agents and is no deeper than the policy, claims come from
a declared source or an agent, dates are real calendar dates, sets are expected only of
keys a policy declares `many`, stated times (`clock T`, `... at T`) never go back, and
handoffs and the analyses of two agents (handoff, common_ground, context_for) appear only
under a policy of depth 2 or more, whose chain `S > R` they read, and `ready` asks only
of procedures declared above (in the scenario or its policy). The nodes carry no spans:
to run a generated file, format it with `tomc.dsl.formatter.format_file` and parse the
text.

Events are drawn as a plain list, independently of one another, then replayed in order
with the agents' presence: an exit or a move by an agent in no room is given to an agent
who is in one (or dropped when nobody is); a peek or a distraction is kept only where it
is valid for the event after it. So hypothesis shrinks a failure by deleting events from
the list.

The property tests (tests/strategies.py adds their settings profiles) and `tomc diff
--search` (tomc/review/search.py, over a fixed `World` of the policies' names) draw from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import partial
from typing import Optional

from hypothesis import strategies as st

from tomc.dsl import ast
from tomc.dsl.checker import parse_time

PLAIN_NAMES = ["Sally", "Anne", "Bob", "room", "box", "marble", "x", "status", "_tmp", "a1"]
UNICODE_NAMES = ["Zoë", "李雷", "Ελένη", "Ångström", "ŝipo", "Мария"]
# Names the formatter must quote: punctuation, spaces, escapes, and words of the grammar.
QUOTED_NAMES = ['O\'Brien "x"', "a > b", "two words", "back\\slash", "tab\there", "new\nline",
                "1st", "a.b", "enter", "to", "in", "is", "trusts", "unknown", "one", " ",
                "\u2028", "x\x7f"]

_CHARACTERS = st.characters(codec="utf-8", exclude_characters="\x00")
_NAME_TOKEN = re.compile(r"[^\W\d]\w*")  # NAME in grammar.lark

name_texts = st.one_of(
    st.sampled_from(PLAIN_NAMES),
    st.sampled_from(UNICODE_NAMES),
    st.sampled_from(QUOTED_NAMES),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True),
    st.text(_CHARACTERS, min_size=1, max_size=12),
)
names = name_texts.map(lambda text: ast.Name(text=text))

# Bare value words: in a value position a grammar word is an ordinary name.
_VALUE_WORDS = ["approved", "rejected", "true", "basket", "enter", "unknown", "from", "to"]

_times = st.one_of(
    # one instant written three ways: equal dates (ties) must be drawn often
    st.sampled_from(["2026-03-01", "2026-03-01T00:00", "2026-03-01T02:00+02:00"]),
    st.dates(date(1970, 1, 1), date(2100, 12, 31)).map(date.isoformat),
    st.builds(lambda moment, spec: moment.isoformat(timespec=spec),
              st.datetimes(datetime(1970, 1, 1), datetime(2100, 12, 31)),
              st.sampled_from(["minutes", "seconds"])),
)


def _text(node: ast.Name | ast.Key) -> str:
    return node.text


def _distinct_names(min_size: int, max_size: int) -> st.SearchStrategy[list[ast.Name]]:
    return st.lists(names, min_size=min_size, max_size=max_size, unique_by=_text)


def _subset(pool: list[ast.Name], max_size: int = 3) -> st.SearchStrategy[list[ast.Name]]:
    return st.lists(st.sampled_from(pool), min_size=1, max_size=max_size, unique_by=_text)


@dataclass
class World:
    """What a scenario may name: declared agents, rooms and sources, the keys its facts
    use, the policy's depth, the keys the policy declares `many` and its procedures."""

    agents: list[ast.Name]
    rooms: list[ast.Name]
    objects: list[ast.Name]
    predicates: list[ast.Name]
    containers: list[ast.Name]
    sources: list[ast.Name] = field(default_factory=list)
    depth: int = 2
    many: frozenset[str] = frozenset()
    procedures: list[ast.Procedure] = field(default_factory=list)  # declared by the policy
    few_values: bool = False  # three words only, so that claims meet the values held
    links: bool = False  # values may link to an object ("@NAME": docs/language.md, "Links")


@st.composite
def worlds(draw, depth: int = 2, max_sources: int = 0, min_sources: int = 0) -> World:
    """2-6 agents, 1-3 rooms and min_sources..max_sources sources, all named distinctly;
    1-3 objects, 1-2 predicates and 1-3 containers."""
    n_agents, n_rooms = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    n_declared = n_agents + n_rooms
    declared = draw(_distinct_names(n_declared + min_sources, n_declared + max_sources))
    return World(agents=declared[:n_agents], rooms=declared[n_agents:n_declared],
                 sources=declared[n_declared:], objects=draw(_distinct_names(1, 3)),
                 predicates=draw(_distinct_names(1, 2)),
                 containers=draw(_distinct_names(1, 3)), depth=depth)


# ---------------------------------------------------------------- keys, values, facts


def keys(world: World) -> st.SearchStrategy[ast.Key]:
    """`object` or `object.predicate`."""
    return st.builds(ast.Key, subject=st.sampled_from(world.objects),
                     predicate=st.none() | st.sampled_from(world.predicates))


def _as_value(name: ast.Name, bare: bool) -> ast.Value:
    """A name in a value position (`X is in C`, `supported by S`): kind name when written
    bare, string when quoted."""
    kind = "name" if bare and _NAME_TOKEN.fullmatch(name.text) else "string"
    return ast.Value(text=name.text, kind=kind)


def _containers(world: World) -> st.SearchStrategy[ast.Value]:
    return st.builds(_as_value, st.sampled_from(world.containers), st.booleans())


def values(world: World) -> st.SearchStrategy[ast.Value]:
    """Right-hand sides of `=`: bare names, strings, numbers and times (in a world of
    world of `few_values`, three words, so that claims meet the values already held)."""
    if world.few_values:
        return st.sampled_from(_VALUE_WORDS[:3]).map(lambda text: ast.Value(text=text))
    if world.links:  # mostly links, so that walks go several links deep
        link = st.sampled_from(world.objects).map(
            lambda o: ast.Value(text="@" + o.text, kind="string"))
        return link | link | link | values(replace(world, links=False))
    return st.one_of(
        st.sampled_from(_VALUE_WORDS).map(lambda text: ast.Value(text=text)),
        _containers(world),
        st.text(_CHARACTERS, max_size=10).map(lambda text: ast.Value(text=text, kind="string")),
        st.from_regex(r"[+-]?[0-9]{1,6}(\.[0-9]{1,3})?", fullmatch=True).map(
            lambda text: ast.Value(text=text, kind="number")),
        _times.map(lambda text: ast.Value(text=text, kind="time")),
    )


def facts(world: World) -> st.SearchStrategy[ast.Fact]:
    """`key = value` or `object is in container`."""
    assign = st.builds(ast.Fact, key=keys(world), value=values(world))
    located = st.builds(
        lambda subject, value: ast.Fact(key=ast.Key(subject=subject), value=value,
                                        form="located"),
        st.sampled_from(world.objects), _containers(world))
    return assign | located


# ---------------------------------------------------------------- events


def _audiences(world: World) -> st.SearchStrategy[dict]:
    return st.one_of(
        st.just({"audience": "all"}),
        st.sampled_from(world.rooms).map(lambda room: {"audience": "room", "room": room}),
        _subset(world.agents).map(lambda agents: {"audience": "agents", "recipients": agents}),
    )


def _ended_claims(world: World) -> st.SearchStrategy[ast.EndedClaim]:
    """`claim KEY [= V] ended from S ...`: mostly the whole key, sometimes one value."""
    return st.builds(
        lambda audience, **fields: ast.EndedClaim(**fields, **audience),
        _audiences(world),
        key=keys(world),
        value=st.none() | st.none() | values(world),
        source=st.sampled_from(world.agents + world.sources),
        by=st.none() | st.sampled_from(world.agents),
        at=st.none() | _times,
        valid_to=st.none() | _times,
    )


def _claims(world: World, fact: st.SearchStrategy[ast.Fact]) -> st.SearchStrategy[ast.Claim]:
    audiences = _audiences(world)
    return st.builds(
        lambda audience, **fields: ast.Claim(**fields, **audience),
        audiences,
        fact=fact,
        source=st.sampled_from(world.agents + world.sources),
        by=st.none() | st.sampled_from(world.agents),
        at=st.none() | _times,
        valid_from=st.none() | _times,
    )


def _events(world: World) -> st.SearchStrategy:
    """Every kind of event (and `clock T`), each drawn without regard to presence or time
    order (see `_replay` and `_in_time_order`); a third of the events say `at T`."""
    times = st.none() | st.none() | _times
    return st.builds(_at, _untimed_events(world), times) | st.builds(ast.Clock, time=_times)


def _at(event, at: Optional[str]):
    """`event ... at T`, when the event can say when it happened."""
    return event.model_copy(update={"at": at}) if isinstance(event, ast.Timed) else event


def _untimed_events(world: World) -> st.SearchStrategy:
    """Every kind of event, as written without `at T`."""
    agent, room, fact = st.sampled_from(world.agents), st.sampled_from(world.rooms), facts(world)
    pairs = st.lists(agent, min_size=2, max_size=2, unique_by=_text)
    handoffs = [st.builds(lambda pair: ast.HandoffWrite(sender=pair[0], receiver=pair[1]),
                          pairs)] if world.depth >= 2 else []  # it reads S > R
    return st.one_of(
        *handoffs,
        st.builds(ast.Enter, agents=_subset(world.agents), room=room),
        st.builds(ast.Exit, agents=_subset(world.agents), room=room),
        st.builds(ast.State, room=room, fact=fact),
        st.builds(ast.Move, actor=agent, subject=st.sampled_from(world.objects),
                  container=st.sampled_from(world.containers)),
        st.builds(ast.SetValue, actor=agent, fact=fact),
        st.builds(lambda pair, fact: ast.Tell(speaker=pair[0], listener=pair[1], fact=fact),
                  pairs, fact),
        st.builds(ast.Says, speaker=agent, fact=fact),
        st.builds(ast.Announce, speaker=agent, fact=fact),
        _claims(world, fact),
        _ended_claims(world),
        st.builds(ast.Retract, speaker=agent, key=keys(world),
                  value=st.none() | st.none() | values(world)),
        st.builds(ast.Wait, agent=agent),
        st.builds(ast.Peek, agent=agent),
        st.builds(ast.Distracted, agent=agent),
        st.builds(ast.Noop, text=st.none() | st.text(_CHARACTERS, max_size=20)),
    )


def _replay(event, where: dict[ast.Name, ast.Name]):
    """`event` made valid for the presence `where` (agent -> room), which it then updates.

    An exit keeps the listed agents in the room of the first one present; a move or a
    `says` by an agent in no room goes to the first agent who is in one. None when such
    an event finds nobody in any room.
    """
    if isinstance(event, ast.Enter):
        where.update(dict.fromkeys(event.agents, event.room))
    elif isinstance(event, ast.Exit):
        present = [a for a in event.agents if a in where] or list(where)[:1]
        if not present:
            return None
        room = where[present[0]]
        leaving = [a for a in present if where[a] == room]
        for agent in leaving:
            del where[agent]
        return ast.Exit(agents=leaving, room=room)
    elif isinstance(event, (ast.Move, ast.Says)):
        role = "actor" if isinstance(event, ast.Move) else "speaker"
        if getattr(event, role) not in where:
            return event.model_copy(update={role: next(iter(where))}) if where else None
    return event


# ---------------------------------------------------------------- queries


def _subjects(world: World) -> st.SearchStrategy[ast.Subject]:
    """`truth KEY`, or a chain of 1..depth distinct agents and a key."""
    chains = st.lists(st.sampled_from(world.agents), max_size=min(world.depth, len(world.agents)),
                      unique_by=_text)
    return st.builds(ast.Subject, chain=chains, key=keys(world))


def _expect(world: World, subject: ast.Subject, form: str, value: ast.Value,
            container: ast.Value, value_list: list[ast.Value], sources: list[ast.Value],
            when: Optional[ast.When]) -> ast.Expect:
    """An expectation of the kind the key allows: a set for a `many` key, else one value."""
    if form in ("unknown", "contested", "supported"):
        listed = {"unknown": [], "contested": [value, *value_list], "supported": sources}
        return ast.Expect(subject=subject, kind=form, values=listed[form], when=when)
    if subject.key.text in world.many:
        return ast.Expect(subject=subject, kind="set", values=value_list, when=when)
    if form == "located" and subject.key.predicate is None:
        return ast.Expect(subject=subject, kind="value", values=[container], form="located",
                          when=when)
    return ast.Expect(subject=subject, kind="value", values=[value], when=when)


def _analyses(world: World) -> st.SearchStrategy:
    """Every analysis, with arguments the checker accepts (the pairs need depth 2)."""
    agent = st.sampled_from(world.agents)
    pairs = st.lists(agent, min_size=2, max_size=2, unique_by=_text)
    chains = st.lists(agent, min_size=1, max_size=min(world.depth, len(world.agents)),
                      unique_by=_text)
    found = [st.builds(ast.FalseBeliefs, depth=st.none() | st.integers(1, world.depth)),
             st.builds(ast.WhoKnows, key=keys(world)),
             st.builds(ast.Explain, chain=chains, key=keys(world)),
             st.builds(ast.PlanAnnouncements, key=keys(world), speaker=agent)]
    if world.depth >= 2:
        found += [pairs.map(lambda p: ast.Handoff(sender=p[0], receiver=p[1])),
                  pairs.map(lambda p: ast.CommonGround(first=p[0], second=p[1])),
                  pairs.map(lambda p: ast.ContextFor(agent=p[0], other=p[1]))]
    return st.one_of(found)


@st.composite
def _analysis_expects(draw, world: World) -> ast.ExpectAnalysis:
    """An expectation of one part of an analysis, with items of the shape that part lists
    (the items themselves are drawn freely: most such expectations fail)."""
    analysis = draw(_analyses(world))
    agent = st.sampled_from(world.agents)
    some_keys = st.lists(keys(world), max_size=3)
    some_agents = st.lists(agent, max_size=3, unique_by=_text)
    match analysis:
        case ast.FalseBeliefs(depth=depth):
            size = depth or 1
            chains = st.lists(agent, min_size=size, max_size=size, unique_by=_text)
            items = st.builds(ast.BelieverKey, chain=chains, key=keys(world))
            listed = draw(st.lists(items, max_size=3)) if size <= len(world.agents) else []
            return ast.ExpectAnalysis(analysis=analysis, believer_keys=listed)
        case ast.WhoKnows():
            part = draw(st.sampled_from(["up_to_date", "out_of_date", "incomplete", "unknown",
                                         "unverified"]))
            return ast.ExpectAnalysis(analysis=analysis, part=part, names=draw(some_agents))
        case ast.Handoff():
            part = draw(st.sampled_from(["includes", "caveats", "excludes"]))
            excluded = st.builds(ast.Excluded, key=keys(world), reason=st.sampled_from(
                ["superseded", "contested", "private", "known", "agent_only"]))
            return ast.ExpectAnalysis(
                analysis=analysis, part=part,
                keys=draw(some_keys) if part != "excludes" else [],
                excluded=draw(st.lists(excluded, max_size=3)) if part == "excludes" else [])
        case ast.CommonGround():
            return ast.ExpectAnalysis(analysis=analysis, keys=draw(some_keys))
        case ast.Explain():
            if draw(st.booleans()):
                return ast.ExpectAnalysis(analysis=analysis, part="from_step",
                                          number=draw(st.integers(0, 40)))
            path = draw(st.lists(agent, min_size=1, max_size=3, unique_by=_text))
            return ast.ExpectAnalysis(analysis=analysis, part="path", names=path)
        case ast.PlanAnnouncements():
            part = draw(st.sampled_from(["best", "tells", "left"]))
            plan = draw(st.sampled_from(["private", "announce"]))
            return ast.ExpectAnalysis(
                analysis=analysis, part=part, plan=plan if part != "tells" else None,
                names=draw(some_agents) if part == "tells" else [],
                depth=draw(st.integers(1, world.depth)) if part == "left" else None,
                number=draw(st.integers(0, 5)) if part == "left" else None)
    part = draw(st.sampled_from(["differ", "first"]))  # context_for
    listed = [draw(keys(world))] if part == "first" else draw(some_keys)
    return ast.ExpectAnalysis(analysis=analysis, part=part, keys=listed)


def procedures(world: World) -> st.SearchStrategy[ast.Procedure]:
    """`procedure NAME { requires KEY [= V] ... }`: 1-3 steps over the world's keys."""
    steps = st.builds(ast.Requirement, key=keys(world), value=st.none() | values(world))
    return st.builds(ast.Procedure, name=names, requires=st.lists(steps, min_size=1,
                                                                    max_size=3))


def _ready_queries(world: World, known: list[ast.Procedure]) -> st.SearchStrategy:
    """`ask ready` and `expect ready` (verdict, blockers or unknown) of a known procedure,
    from the truth or a chain, now, at a step or on a date."""
    chains = st.lists(st.sampled_from(world.agents), max_size=min(world.depth, len(world.agents)),
                      unique_by=_text)
    ready = st.builds(ast.Ready, procedure=st.sampled_from([p.name for p in known]),
                      chain=chains)
    whens = st.none() | st.builds(ast.When, step=st.integers(0, 40)) | st.builds(
        ast.When, date=_times)
    verdicts = st.builds(ast.ExpectReady, ready=ready, part=st.just("verdict"),
                         verdict=st.sampled_from(["ready", "blocked", "unknown"]), when=whens)
    parts = st.builds(ast.ExpectReady, ready=ready,
                      part=st.sampled_from(["blockers", "unknown"]),
                      keys=st.lists(keys(world), max_size=3), when=whens)
    return st.builds(ast.AskReady, ready=ready, when=whens) | verdicts | parts


def _queries(world: World,
             known: list[ast.Procedure] = ()) -> st.SearchStrategy[ast.Expect | ast.Ask]:
    whens = st.none() | st.builds(ast.When, step=st.integers(0, 40)) | st.builds(
        ast.When, date=_times) | st.builds(ast.When, time=_times)
    sources = st.lists(st.builds(_as_value, st.sampled_from(world.agents + world.sources),
                                 st.booleans()), min_size=1, max_size=3)
    expects = st.builds(partial(_expect, world), _subjects(world),
                        st.sampled_from(["assign", "located", "unknown", "contested",
                                         "supported"]),
                        values(world), _containers(world), st.lists(values(world), max_size=3),
                        sources, whens)
    asks = st.builds(ast.Ask, subject=_subjects(world), when=whens)
    analyses = st.builds(ast.AskAnalysis, analysis=_analyses(world)) | _analysis_expects(world)
    if known:
        return expects | asks | analyses | _ready_queries(world, list(known))
    return expects | asks | analyses


# ---------------------------------------------------------------- scenarios and files


def _witnessed(event, where: dict[ast.Name, ast.Name]) -> Optional[tuple[set, set]]:
    """(the agents in the room of an event seen in a room, or who hear a tell or says, its
    actors), with presence `where` after it; None for other events."""
    if isinstance(event, ast.Tell):
        return {event.speaker, event.listener}, {event.speaker}
    if isinstance(event, ast.Says):
        room = where.get(event.speaker)
        return {a for a, r in where.items() if r == room}, {event.speaker}
    if isinstance(event, (ast.State, ast.Enter)):
        present = {a for a, room in where.items() if room == event.room}
        return present, set(event.agents) if isinstance(event, ast.Enter) else set()
    if isinstance(event, (ast.Move, ast.SetValue)):
        room = where.get(event.actor)
        present = {a for a, r in where.items() if r == room} if room else {event.actor}
        return present, {event.actor}
    return None


def _played(events: list, where: dict[ast.Name, ast.Name], agents: list[ast.Name]) -> list:
    """The events replayed with presence (`_replay`); a peek or a distraction stays in its
    place (times stay in order) when the next event is one seen in a room or a tell or
    says, fitted to it: a peeker outside the room (not a listener), a distracted agent
    inside it (a listener), not its actor (`_fitted`), as the checker requires; else it is
    dropped."""
    played: list = []
    pending: list[int] = []  # where the peeks and distractions waiting for an event are
    for event in events:
        if isinstance(event, (ast.Peek, ast.Distracted)):
            pending.append(len(played))
        elif not isinstance(event, ast.Clock):  # a clock is not an event: they wait on
            event = _replay(event, where)
            if event is None:
                continue
            seen = _witnessed(event, where)
            for i in pending:
                played[i] = _fitted(played[i], *seen, agents) if seen else None
            pending = []
        played.append(event)
    for i in pending:
        played[i] = None
    return [e for e in played if e is not None]


def _fitted(modifier, present: set, actors: set, agents: list):
    """A peek or a distraction made valid for the event after it: given to the first agent
    who can peek (outside the room) or be distracted (inside, not the actor), or None."""
    peek = isinstance(modifier, ast.Peek)
    can = [a for a in [modifier.agent, *agents]
           if (a not in present) == peek and a not in actors]
    return modifier.model_copy(update={"agent": can[0]}) if can else None


def _scenario(world: World, declared: list[ast.Procedure], name: ast.Name, events: list,
              queries: list) -> ast.Scenario:
    played = _played(_in_time_order(events), {}, world.agents)
    played = _retracting_what_was_said(played)
    steps = sum(not isinstance(e, ast.Clock) for e in played)
    asked = [_no_later_than(steps, query) for query in queries]
    return ast.Scenario(name=name, statements=[ast.Agents(names=world.agents),
                                               ast.Rooms(names=world.rooms), *declared,
                                               *played, *asked])


def _in_time_order(events: list) -> list:
    """The events with the times they state (`clock T`, `... at T`; not a claim's `at`, its
    publication time) sorted into the order of the events: times never go back (E148)."""
    def stated(event) -> bool:
        return isinstance(event, ast.Clock) or (isinstance(event, ast.Timed)
                                                and event.at is not None)

    times = iter(sorted((e.time if isinstance(e, ast.Clock) else e.at
                         for e in events if stated(e)), key=parse_time))
    return [(ast.Clock(time=next(times)) if isinstance(e, ast.Clock)
             else e.model_copy(update={"at": next(times)})) if stated(e) else e
            for e in events]


def _retracting_what_was_said(events: list) -> list:
    """Each `A retracts KEY` made to name the key A last spoke about (a retraction closes
    only beliefs held on A's word: drawn freely, it would seldom find one)."""
    said: dict[str, ast.Key] = {}
    out = []
    for event in events:
        if isinstance(event, (ast.Tell, ast.Says, ast.Announce)):
            said[event.speaker.text] = event.fact.key
        if isinstance(event, ast.Retract) and event.speaker.text in said:
            event = event.model_copy(update={"key": said[event.speaker.text]})
        out.append(event)
    return out


def _no_later_than(steps: int, query):
    """A query `at step N` (or `expect explain ... from step N`) moved back to the last step
    when N has not happened yet."""
    if isinstance(query, ast.ExpectAnalysis):
        if query.part == "from_step" and query.number > steps:
            return query.model_copy(update={"number": steps})
        return query
    if isinstance(query, ast.AskAnalysis):
        return query
    if query.when is not None and query.when.step is not None and query.when.step > steps:
        return query.model_copy(update={"when": ast.When(step=steps)})
    return query


def _provenance_events(world: World) -> st.SearchStrategy:
    """Claims to one agent, tells, reports, handoffs and endings: what gives beliefs sources,
    rivals, dates, endings and models of others to hand on (a world of depth 2 or more)."""
    agent, fact = st.sampled_from(world.agents), facts(world)
    pairs = st.lists(agent, min_size=2, max_size=2, unique_by=_text)
    handoff = st.builds(lambda pair: ast.HandoffWrite(sender=pair[0], receiver=pair[1]), pairs)
    tell = st.builds(lambda pair, fact: ast.Tell(speaker=pair[0], listener=pair[1], fact=fact),
                     pairs, fact)
    # Claims to one agent: what the others lack, so that a handoff has something to send.
    to_one = st.builds(lambda claim, agent: claim.model_copy(update={
        "audience": "agents", "room": None, "recipients": [agent]}), _claims(world, fact), agent)
    events = [handoff, to_one, tell, _ended_claims(world)]
    if len(world.agents) >= 3:  # a report names a third agent: `S tells L X believes ...`
        trios = st.lists(agent, min_size=3, max_size=3, unique_by=_text)
        events.append(st.builds(lambda trio, fact: ast.Tell(
            speaker=trio[0], listener=trio[1], about=trio[2], fact=fact), trios, fact))
    return st.one_of(*events)


def _dispute_events(world: World) -> st.SearchStrategy:
    """Mostly claims, with tells, announcements, endings and retractions: what resolution
    (docs/semantics.md section 4) decides between, and what settles a dispute under `trust
    learned`."""
    agent, fact = st.sampled_from(world.agents), facts(world)
    pairs = st.lists(agent, min_size=2, max_size=2, unique_by=_text)
    return st.one_of(
        _claims(world, fact), _claims(world, fact), _claims(world, fact),
        st.builds(lambda pair, fact: ast.Tell(speaker=pair[0], listener=pair[1], fact=fact),
                  pairs, fact),
        st.builds(ast.Announce, speaker=agent, fact=fact),
        _ended_claims(world),
        st.builds(ast.Retract, speaker=agent, key=keys(world),
                  value=st.none() | values(world)))


def scenarios(world: World, max_events: int = 40, max_queries: int = 6,
              events: Optional[st.SearchStrategy] = None) -> st.SearchStrategy[ast.Scenario]:
    """A scenario over `world`: declarations (0-2 procedures of its own, named apart from
    the policy's), up to max_events events (drawn from `events`, by default every kind),
    then up to max_queries expects and asks (`at step N` names a step that has happened)."""
    events = _events(world) if events is None else events  # a drawn length: lists alone
    # average about five elements
    taken = {p.name.text for p in world.procedures}
    own = st.lists(procedures(world).filter(lambda p: p.name.text not in taken),
                   max_size=2 if max_queries else 0, unique_by=lambda p: p.name.text)
    return own.flatmap(lambda declared: st.builds(
        partial(_scenario, world, declared), names,
        st.integers(0, max_events).flatmap(lambda n: st.lists(events, min_size=n, max_size=n)),
        st.lists(_queries(world, [*world.procedures, *declared]), max_size=max_queries)))


def scenario_files(max_events: int = 40) -> st.SearchStrategy[ast.File]:
    """`use policy default` (depth 2) or `use policy hitom` (depth 4), then one scenario."""
    def using(policy: str, depth: int) -> st.SearchStrategy[ast.File]:
        return worlds(depth=depth).flatmap(lambda world: scenarios(world, max_events)).map(
            lambda scenario: ast.File(items=[ast.UsePolicy(target=ast.Name(text=policy)),
                                             scenario]))

    return using("default", 2) | using("hitom", 4)


def linked_files(max_events: int = 30) -> st.SearchStrategy[ast.File]:
    """`use policy default`, then one scenario whose values mostly link to its 1-3 objects,
    told, announced (half the events) and everything else: the walks of `about` and
    `explain ... follow` (docs/language.md, "Links")."""
    def linked(world: World) -> st.SearchStrategy[ast.Scenario]:
        world = replace(world, links=True)
        agent = st.sampled_from(world.agents)
        fact = st.builds(ast.Fact, key=keys(world), value=values(world))
        pairs = st.lists(agent, min_size=2, max_size=2, unique_by=_text)
        return scenarios(world, max_events, events=st.one_of(
            st.builds(ast.Announce, speaker=agent, fact=fact),
            st.builds(lambda pair, fact: ast.Tell(speaker=pair[0], listener=pair[1], fact=fact),
                      pairs, fact),
            _events(world), _events(world)))
    return worlds().flatmap(linked).map(lambda scenario: ast.File(
        items=[ast.UsePolicy(target=ast.Name(text="default")), scenario]))


# ---------------------------------------------------------------- policies

_PATHS = [["listener"], ["speaker"], ["listener", "speaker"], ["speaker", "listener"]]
_EXCEPTED = [[], ["speaker"], ["listener"], ["speaker", "listener"]]
_WITNESS_SETS = [["witnesses"], ["witnesses", "peekers"], ["witnesses", "distracted"],
                 ["peekers"], ["distracted"]]
_OVER = [["listeners"], ["believers"], ["believers", "speaker"], ["listeners", "speaker"],
         ["speaker"]]


def _path_rule(path: list[str], excepted: list[str],
               condition: Optional[ast.Condition]) -> ast.Rule:
    """A chain of roles; a trust condition only when `listener` is in it."""
    return ast.Rule(path=path, excepted=excepted,
                    condition=condition if "listener" in path else None)


def _rules(event_class: str) -> st.SearchStrategy[ast.Rule]:
    """A rule the checker accepts under `on event_class:`."""
    if event_class == "observe":
        return st.sampled_from(_WITNESS_SETS).map(lambda over: ast.Rule(over=over))
    over = st.builds(ast.Rule, over=st.sampled_from(_OVER), excepted=st.sampled_from(_EXCEPTED))
    conditions = st.none() | st.builds(ast.Condition, truster=st.just("listener"),
                                       trusted=st.just("speaker"), negated=st.booleans())
    path = st.builds(_path_rule, st.sampled_from(_PATHS), st.sampled_from(_EXCEPTED), conditions)
    return over | path


def _sections(event_class: str) -> st.SearchStrategy[ast.Section]:
    if event_class == "enter":  # entering takes a reveal mode, no rules
        return st.builds(ast.Section, event_class=st.just("enter"),
                         reveal=st.sampled_from([None, "nothing", "contents"]))
    return st.builds(ast.Section, event_class=st.just(event_class),
                     rules=st.lists(_rules(event_class), max_size=3))


@st.composite
def policies(draw, world: World) -> ast.Policy:
    """A valid policy: depth 1-4 or unset, the world's sources, predicates over its keys,
    sections in any order, each event class at most once, and 0-2 procedures."""
    classes = draw(st.lists(st.sampled_from(["observe", "enter", "tell", "announce", "claim"]),
                            unique=True))
    declared = draw(st.lists(keys(world), max_size=3, unique_by=_text))
    return ast.Policy(
        name=draw(names),
        depth=draw(st.none() | st.integers(1, 4)),
        trust=draw(st.sampled_from([None, "credulous", "exit_order", "authority", "learned"])),
        ties=draw(st.sampled_from([None, "contested", "newest", "first"])),
        sources=[ast.SourceDecl(name=source, authority=draw(st.integers(-5, 9)))
                 for source in world.sources],
        predicates=[ast.PredicateDecl(key=key, cardinality=draw(st.sampled_from(["one", "many"])),
                                      agent_only=draw(st.booleans()))
                    for key in declared],
        sections=[draw(_sections(event_class)) for event_class in classes],
        procedures=draw(st.lists(procedures(world), max_size=2,
                                 unique_by=lambda p: p.name.text)),
    )


@st.composite
def inline_policy_files(draw, max_events: int = 40) -> ast.File:
    """A file that defines a policy, uses it, and has one scenario within its depth."""
    world = draw(worlds(max_sources=2))
    policy = draw(policies(world))
    world = replace(world, depth=policy.depth or 2, many=frozenset(
        p.key.text for p in policy.predicates if p.cardinality == "many"),
        procedures=policy.procedures)
    return ast.File(items=[policy, ast.UsePolicy(target=policy.name),
                           draw(scenarios(world, max_events))])


@st.composite
def handoff_files(draw, max_events: int = 20) -> ast.File:
    """A file whose handoffs carry provenance: a `trust authority` policy of depth 2-4 with
    its sources, and a scenario of claims to one agent, tells and handoffs only."""
    world = draw(worlds(max_sources=2))
    policy = draw(policies(world)).model_copy(
        update={"trust": "authority", "depth": draw(st.integers(2, 4))})
    world = replace(world, depth=policy.depth, many=frozenset(
        p.key.text for p in policy.predicates if p.cardinality == "many"),
        procedures=policy.procedures)
    return ast.File(items=[policy, ast.UsePolicy(target=policy.name), draw(scenarios(
        world, max_events, events=_provenance_events(world)))])


@st.composite
def authority_files(draw, max_events: int = 30) -> ast.File:
    """Disputes under `trust authority` or `trust learned`: 2-3 sources of drawn authorities
    claim, and agents tell, announce and retract, one of three values about one object, at
    drawn publication times, so that every outcome of docs/semantics.md section 4 (adopt,
    corroborate, supersede, contest, and ties) happens often, and under `trust learned`
    disputes are settled; under the shipped policies' credulous trust no claim is ever
    contested."""
    world = draw(worlds(max_sources=3, min_sources=2))
    world = replace(world, objects=world.objects[:1], predicates=world.predicates[:1],
                    few_values=True)
    policy = draw(policies(world)).model_copy(
        update={"trust": draw(st.sampled_from(["authority", "learned"]))})
    world = replace(world, depth=policy.depth or 2, many=frozenset(
        p.key.text for p in policy.predicates if p.cardinality == "many"),
        procedures=policy.procedures)
    scenario = draw(scenarios(world, max_events, events=_dispute_events(world)))
    everyone = ast.Enter(agents=world.agents, room=world.rooms[0])
    statements = list(scenario.statements)
    statements.insert(2 + sum(isinstance(s, ast.Procedure) for s in statements), everyone)
    return ast.File(items=[policy, ast.UsePolicy(target=policy.name),
                           scenario.model_copy(update={"statements": statements})])


def valid_files(max_events: int = 40) -> st.SearchStrategy[ast.File]:
    """Every file shape the formatter must round-trip: a shipped or an inline policy, and
    one scenario."""
    return scenario_files(max_events) | inline_policy_files(max_events)
