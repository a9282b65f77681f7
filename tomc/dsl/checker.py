"""AST -> checked program (`tomc.dsl.program`), with every problem as a diagnostic.

The checker replays presence statically (who is in which room at each step) only to
diagnose impossible events: an exit from a room the agent is not in (E120), a move or a
`says` by an agent in no room (E121). What agents believe is never computed here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Iterator, Mapping, Optional

from pyrsistent import PSet, PVector, pset, pvector

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from tomc.dsl.formatter import format_statement
from tomc.dsl.parser import parse, parse_statements, read_source
from tomc.dsl.policies import (
    MAX_DEPTH,
    check_policy,
    check_procedures,
    load_policy,
    perspective_count,
    procedure_model,
    resolve,
)
from tomc.dsl.program import (
    DEFAULT_HOPS,
    MAX_HOPS,
    MODIFIERS,
    AnalysisQuery,
    AnyEvent,
    Communication,
    Fact,
    Handoff,
    Observation,
    PolicyModel,
    Presence,
    Procedure,
    QueryModel,
    Quiet,
    ReadyQuery,
    ScenarioModel,
)

MAX_DIAGNOSTICS = 100  # per scenario


@dataclass
class CheckResult:
    """The checked scenarios of one file, its diagnostics and its source text."""

    path: str
    source: str
    scenarios: list[ScenarioModel] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: int = 0  # errors beyond MAX_DIAGNOSTICS per scenario, counted, not kept

    @property
    def ok(self) -> bool:
        return not self.suppressed and not any(d.severity == "error" for d in self.diagnostics)


def check_file(path: str | Path) -> CheckResult:
    """Read, parse and check one .tom file. Never raises for bad input: see `.diagnostics`."""
    path = str(path)
    try:
        source = read_source(path)
    except DiagnosticError as err:
        return CheckResult(path, "", diagnostics=err.diagnostics)
    return check_text(source, path)


def check_text(source: str, path: str = "<input>", base: Optional[Path] = None) -> CheckResult:
    """Parse and check .tom text; `base` is the folder policy paths are relative to."""
    try:
        file = parse(source, path)
    except DiagnosticError as err:
        return CheckResult(path, source, diagnostics=_beside_syntax(err, source, path, base))
    return check_parsed(file, source, path, base)


# Unknown names (agents, rooms, sources, policies, procedures): what a file with syntax
# errors is also checked for, in the text its lines in error were taken out of.
NAME_CODES = ("E101", "E102", "E103", "E104", "E170")


def _beside_syntax(err: DiagnosticError, source: str, path: str,
                   base: Optional[Path]) -> list[Diagnostic]:
    """The syntax errors of `err`, and the unknown names of the rest of the file when it
    parses without its lines in error (`err.recovered`). A name that a line in error
    mentions is not reported: that line may have been its declaration."""
    if err.recovered is None:
        return err.diagnostics
    file, recovered = err.recovered
    taken_out = {word for before, after in zip(source.split("\n"), recovered.split("\n"))
                 if before != after for word in re.findall(r"[^\W\d]\w*", before)}
    lines = recovered.split("\n")
    names = []
    for d in check_parsed(file, recovered, path, base).diagnostics:
        if d.code not in NAME_CODES or d.path != path or d.span is None:
            continue
        named = lines[d.span.line - 1][d.span.column - 1:d.span.end_column - 1].strip('"')
        if named not in taken_out:
            names.append(d)
    return sorted(err.diagnostics + names, key=lambda d: (d.span.line, d.span.column))


def check_parsed(file: ast.File, source: str, path: str = "<input>",
                 base: Optional[Path] = None) -> CheckResult:
    """Check a parsed file (`source` is its text, for the events' text and diagnostics); a
    caller may have edited its items first, e.g. `tomc diff` puts another `use policy`."""
    result = CheckResult(path, source)
    base = base or Path(path).parent
    inline: dict[str, ast.Policy] = {}
    for item in file.items:
        if isinstance(item, ast.Policy):
            if item.name.text in inline:
                result.diagnostics.append(Diagnostic(
                    "E110", f"policy `{item.name.text}` is defined twice", item.name.span, path))
            inline[item.name.text] = item
            result.diagnostics.extend(check_policy(item, path))
    uses = [item for item in file.items if isinstance(item, ast.UsePolicy)]
    for extra in uses[1:]:
        result.diagnostics.append(Diagnostic("E110", "a file uses one policy", extra.span, path,
                                             hint="keep a single `use policy` line"))
    policy_ast, problems = load_policy(uses[0] if uses else None, inline, base, path)
    result.diagnostics.extend(problems)
    scenarios = [item for item in file.items if isinstance(item, ast.Scenario)]
    if not scenarios and not inline:
        result.diagnostics.append(Diagnostic("E160", "the file has no scenario", None, path,
                                             hint="add `scenario NAME { ... }`"))
    if policy_ast is None or not result.ok:
        return result
    policy = resolve(policy_ast)
    names: set[str] = set()
    for scenario in scenarios:
        if scenario.name.text in names:
            result.diagnostics.append(Diagnostic(
                "E110", f"scenario `{scenario.name.text}` is defined twice", scenario.name.span,
                path, hint="give each scenario its own name"))
        names.add(scenario.name.text)
        checker = _ScenarioChecker(scenario, policy, path, source)
        result.scenarios.append(checker.check())
        result.diagnostics.extend(checker.diagnostics)
        result.suppressed += checker.suppressed
    if not result.ok:
        result.scenarios = []
    return result


def parse_time(text: str) -> Optional[str]:
    """A date or timestamp as one canonical instant, `YYYY-MM-DDTHH:MM:SS` in UTC, or None
    if it is not a real calendar time. A date is its midnight; a time without a zone is
    UTC; `Z` and `+02:00` are converted. Fixed-width text in one zone, so comparing the text
    compares the instants (`2026-03-01` and `2026-03-01T00:00` are the same)."""
    try:
        if "T" in text:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        else:
            moment = datetime.combine(date.fromisoformat(text), time())
    except ValueError:
        return None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
            return None
    return moment.isoformat(timespec="seconds")


@dataclass(frozen=True)
class CheckState:
    """A live scenario's state after the statements checked so far (`LiveChecker.check`
    makes the next one from it; none is ever changed): the agents and rooms declared, who
    is where, the events in step order, the procedures, the clock (the time the next
    event takes) and the keys events have written (W180).

    `events` and `written` are persistent collections (pyrsistent): the next state shares
    them with this one, so a statement costs the same after 100,000 events as after 10
    (a tuple copied per statement made replaying a memory quadratic). A memory attached
    from a checkpoint holds a `History` instead (tomc/engine/history.py: the same
    operations, its past events read when asked)."""

    agents: tuple[str, ...]
    rooms: tuple[str, ...]
    where: Mapping[str, Optional[str]]
    events: PVector  # or a tomc.engine.history.History (same operations)
    procedures: Mapping[str, Procedure]
    clock: Optional[str] = None
    written: PSet = pset()

    def with_event(self, index: int, event: AnyEvent) -> "CheckState":
        """This state with the event at `index` replaced (given its line in a memory)."""
        return replace(self, events=self.events.set(index, event))


@dataclass(frozen=True)
class Checked:
    """What checking statements after a state gave: the next `state`, the new `events`
    (which the state holds too), the new `queries` (which it does not keep: a live session
    answers them once), the keys the questions `asked` (with their spans) and the
    `warnings` (W180)."""

    state: CheckState
    events: list[AnyEvent]
    queries: list[QueryModel]
    asked: list[tuple[str, Optional[ast.Span]]]
    warnings: list[Diagnostic]


class LiveChecker:
    """One scenario, checked so far, that takes further statements one text at a time: what
    a live session (tomc/engine/live.py, tomc/api.py) checks each `apply` and `ask` against.

    `check` is a function from one `CheckState` to the next; `state` is the one reached,
    which `add` moves on and `reset` puts back. `scenario` is a model of `state` of its
    own: nothing the checker does later changes it, and an engine is told of each change
    (tomc/engine/base.py), never handed the checker's lists.

    Built from .tom source holding the scenario (and its policy); raises DiagnosticError
    when the source has errors, ValueError when it does not hold exactly one scenario named
    `scenario` (or exactly one scenario, when no name is given).
    """

    def __init__(self, source: str, path: str, scenario: Optional[str] = None):
        result = check_text(source, path)
        if not result.ok:
            raise DiagnosticError(result.diagnostics)
        found = [s for s in result.scenarios if scenario in (None, s.name)]
        if len(found) != 1:
            names = ", ".join(s.name for s in result.scenarios) or "none"
            named = f" named {scenario}" if scenario else ""
            raise ValueError(f"{path} must hold one scenario{named} (it has: {names})")
        tree = next(item for item in parse(source, path).items
                    if isinstance(item, ast.Scenario) and item.name.text == found[0].name)
        self._checker = _ScenarioChecker(tree, found[0].policy, path, source)
        self._checker.check()
        self.state = self._checker.state()
        self._queries = tuple(self._checker.queries)  # the source's own, kept in `scenario`
        self.warnings: list[Diagnostic] = []  # of the last `add` (W180)
        self._asked: list[tuple[str, Optional[ast.Span]]] = []
        self._path = path
        self._model: tuple[Optional[CheckState], Optional[ScenarioModel]] = (None, None)

    @property
    def scenario(self) -> ScenarioModel:
        """The scenario as of `state`: a model of its own (made once per state)."""
        state, model = self._model
        if state is not self.state:
            model = self._checker.model(self.state, self._queries)
            self._model = (self.state, model)
        return model

    def warnings_for(self, agent: str) -> list[Diagnostic]:
        """The last `add`'s warnings as `agent` may see them: judged and hinted from the
        events it witnessed only."""
        seen = [e for e in self.state.events if agent in e.witnesses]
        return [replace(d, path=self._path) for d in self._checker.unwritten(self._asked, seen)]

    @property
    def clock(self) -> Optional[str]:
        """The time the next event takes (canonical: tomc.dsl.checker.parse_time), None
        before any time is stated."""
        return self.state.clock

    def check(self, state: CheckState, statements: list, accept: tuple[type, ...],
              source: Optional[str] = None, path: str = "<apply>",
              canonical: bool = False) -> Checked:
        """Check `statements` (AST nodes, parsed from `source` or built in code) after
        `state`; returns the next state and what it added. With `canonical`, each event's
        text is the statement in canonical form (`tomc fmt`), not as written: what a memory
        keeps, to replay.

        Raises DiagnosticError (spans within `source`); ValueError, before checking
        anything, when a statement is not of the `accept` types. Warnings (W180: a question
        about a key no event has written so far) do not stop them."""
        refused = [type(stmt).__name__ for stmt in statements if not isinstance(stmt, accept)]
        if refused or not statements:
            raise ValueError(f"expected {' or '.join(t.__name__ for t in accept)}, got "
                             f"{', '.join(refused) or 'nothing'}")
        checker = self._checker  # a scratch of this checker's own, loaded with `state`
        checker.load(state)
        checker.lines = None if canonical else (source or "").split("\n")
        checker.path = path
        for stmt in statements:
            checker.statement(stmt)
        if checker.diagnostics:
            raise DiagnosticError(checker.diagnostics)
        after = checker.state()
        return Checked(after, list(after.events[len(state.events):]), list(checker.queries),
                       list(checker.asked), checker.unwritten(checker.asked))

    def add_text(self, text: str, accept: tuple[type, ...],
                 path: str = "<apply>") -> tuple[list[AnyEvent], list]:
        """Parse `text` as statements (the `statements` rule: a `}` is a syntax error, not
        the end of a block) and `add` them; diagnostics point into `text`."""
        return self.add(parse_statements(text, path), accept, text, path)

    def add(self, statements: list, accept: tuple[type, ...], source: Optional[str] = None,
            path: str = "<apply>", canonical: bool = False) -> tuple[list[AnyEvent], list]:
        """`check` after `state`, and move `state` on; returns the new events and queries,
        and leaves the warnings in `warnings` until the next call. Raises as `check`, and
        then keeps nothing of them."""
        checked = self.check(self.state, statements, accept, source, path, canonical)
        self.state = checked.state
        self._asked, self._path, self.warnings = checked.asked, path, checked.warnings
        return checked.events, checked.queries

    def take(self, events: list[AnyEvent]) -> None:
        """Hold `events` as they are, unchecked: checked once by the writer that committed
        them, and seen here only in part (an agent's view of a memory:
        tomc/memory/agent_live.py), so they could not be checked again."""
        self.state = replace(self.state, events=self.state.events.extend(events),
                             written=self.state.written.update(_written(events)))

    def mark(self) -> CheckState:
        """The state so far, to `reset` to (a live session whose write lost a race to
        another writer takes back what it checked, then checks it again)."""
        return self.state

    def reset(self, mark: CheckState) -> None:
        """Forget everything checked after `mark`."""
        self.state = mark

    def number(self, index: int, line: int) -> AnyEvent:
        """Give event `index` of the state its `line` (a memory's: tomc/engine/live.py);
        returns it."""
        event = replace(self.state.events[index], line=line)
        self.state = self.state.with_event(index, event)
        return event


def _written(events) -> set[str]:
    """The keys `events` write (their facts')."""
    return {e.fact.key for e in events if isinstance(getattr(e, "fact", None), Fact)}


def _line(node: ast.Node) -> int:
    """The line a statement starts on; 0 for a statement built in code (no source)."""
    return node.span.line if node.span else 0


class _ScenarioChecker:
    def __init__(self, scenario: ast.Scenario, policy: PolicyModel, path: str, source: str):
        self.scenario = scenario
        self.policy = policy
        self.path = path  # of the diagnostics (a live checker's statements: their own)
        self.origin = path  # the scenario's, which its model names
        self.lines = source.split("\n")  # as the parser counts lines
        self.diagnostics: list[Diagnostic] = []
        self.suppressed = 0
        self.agents: list[str] = []
        self.rooms: list[str] = []
        self.where: dict[str, Optional[str]] = {}
        # A list, or a live checker's state's events being extended (`load`): indexes,
        # len and append only.
        self.events: list[AnyEvent] = []
        self.written: PSet = pset()  # the keys events have written (W180)
        self.queries: list[QueryModel] = []
        self.procedures: dict[str, Procedure] = dict(policy.procedures)
        self.clock: Optional[str] = None  # the time of the next event (docs/language.md, "Time")
        self.modifier_span: Optional[ast.Span] = None  # of the last peek or distraction
        self.asked: list[tuple[str, Optional[ast.Span]]] = []  # keys questions name (W180)

    def error(self, code: str, message: str, span, hint: Optional[str] = None) -> None:
        if self.full:
            self.suppressed += 1
            return
        self.diagnostics.append(Diagnostic(code, message, span, self.path, hint=hint))

    def unwritten(self, asked: list[tuple[str, Optional[ast.Span]]],
                  events: Optional[list[AnyEvent]] = None) -> list[Diagnostic]:
        """W180 for each asked key that no event so far (of `events`, default all) wrote and
        that neither the policy (`predicate`) nor a procedure declares: most likely a
        misspelling, whose answer would be a silent `unknown` (docs/diagnostics.md, W180)."""
        if not asked:
            return []
        written = set(self.written) if events is None else _written(events)
        known = written | set(self.policy.cardinality) | {
            r.key for p in self.procedures.values() for r in p.requires}
        found = []
        for key, span in asked:
            if key in known:
                continue
            close = difflib.get_close_matches(key, sorted(written), n=3, cutoff=0.6)
            hint = ("closest keys written: " + ", ".join(f"`{k}`" for k in close) if close
                    else f"declare `predicate {key} one` in the policy if it is written later")
            found.append(Diagnostic("W180", f"no event has written `{key}`: the answer can "
                                    "only be `unknown`", span, self.path, hint=hint,
                                    severity="warning"))
        return found

    def check(self) -> ScenarioModel:
        for stmt in self.scenario.statements:
            self.statement(stmt)
        # After every event: a question may come before the event that writes its key.
        self.diagnostics.extend(self.unwritten(self.asked))
        if self.pending():
            last = self.pending()[-1]
            self.error("E175", f"`{last.text}` applies to the next event, and none follows",
                       self.modifier_span, "add the event it witnesses or misses, or remove it")
        return self.model()

    def statement(self, stmt) -> None:
        if self.policy.aliases:  # `alias`: a subject's other names are the subject
            stmt = ast.renamed_subjects(stmt, self.policy.subject)
        if isinstance(stmt, ast.Timed) and stmt.at is not None:
            self._advance(stmt.at, stmt)  # before the event, which takes the clock's time
        getattr(self, f"_{type(stmt).__name__.lower()}")(stmt)

    def _advance(self, text: str, node: ast.Node) -> None:
        """Set the clock to `text` (`clock T`, an event's `at T`): times never go back."""
        moment = self._time(text, node)
        if moment is None:
            return
        if self.clock is not None and moment < self.clock:
            self.error("E148", f"time goes backwards: {text} is before the clock "
                       f"({self.clock}, set by an earlier line)", node.span,
                       f"give a time at or after {self.clock}: events are in time order")
            return
        self.clock = moment

    def _clock(self, stmt: ast.Clock) -> None:
        self._advance(stmt.time, stmt)

    def model(self, state: Optional["CheckState"] = None,
              queries: tuple[QueryModel, ...] = ()) -> ScenarioModel:
        """The scenario checked so far (a whole file's, with its questions), or as of a live
        checker's `state` with `queries` (lists of its own)."""
        if state is None:
            return ScenarioModel(name=self.scenario.name.text, path=self.origin,
                                 policy=self.policy, agents=self.agents, rooms=self.rooms,
                                 events=self.events, queries=self.queries, line=self._start,
                                 procedures=self.procedures)
        # The state's events as they are (immutable, shared): a copy per state made every
        # write cost the whole history.
        return ScenarioModel(name=self.scenario.name.text, path=self.origin,
                             policy=self.policy, agents=list(state.agents), rooms=list(state.rooms),
                             events=state.events, queries=list(queries),
                             line=self._start,
                             procedures=dict(state.procedures))

    @property
    def _start(self) -> int:
        return self.scenario.span.line if self.scenario.span else 1

    def state(self) -> "CheckState":
        """What a live checker keeps of this checker's state (tomc/dsl/checker.py)."""
        events = (self.events.persistent() if hasattr(self.events, "persistent")
                  else pvector(self.events))
        return CheckState(tuple(self.agents), tuple(self.rooms),
                          MappingProxyType(dict(self.where)), events,
                          MappingProxyType(dict(self.procedures)), self.clock, self.written)

    def load(self, state: "CheckState") -> None:
        """Take `state` as the state so far, with no diagnostics, questions or spans."""
        self.agents, self.rooms = list(state.agents), list(state.rooms)
        self.where, self.events = dict(state.where), state.events.evolver()
        self.written = state.written
        self.procedures, self.clock = dict(state.procedures), state.clock
        self.diagnostics, self.queries, self.asked = [], [], []
        self.suppressed, self.modifier_span = 0, None

    # declarations
    def _declare(self, names: list[ast.Name], into: list[str], what: str) -> None:
        for name in names:
            if name.text in into:
                self.error("E110", f"{what} `{name.text}` is declared twice", name.span,
                           "remove the second declaration")
            else:
                into.append(name.text)

    def _agents(self, stmt: ast.Agents) -> None:
        self._declare(stmt.names, self.agents, "agent")
        for name in stmt.names:
            self.where.setdefault(name.text, None)
        count = perspective_count(len(self.agents), self.policy.depth)
        if count > self.policy.max_perspectives:
            self.error("E152", f"{len(self.agents)} agents at depth {self.policy.depth} make "
                       f"{count:,} perspectives, over the policy's limit of "
                       f"{self.policy.max_perspectives:,}", stmt.span,
                       hint=f"lower the policy's `depth`, or raise the limit with `limits "
                            f"perspectives {count}` in the policy")

    def _rooms(self, stmt: ast.Rooms) -> None:
        self._declare(stmt.names, self.rooms, "room")

    # name resolution
    @property
    def full(self) -> bool:
        """Past MAX_DIAGNOSTICS errors are only counted: a file of thousands of bad lines
        must not take minutes of "did you mean" searches or gigabytes of output."""
        return len(self.diagnostics) >= MAX_DIAGNOSTICS

    def suggest(self, name: str, candidates) -> Optional[str]:
        return None if self.full else did_you_mean(name, candidates)

    def agent(self, name: ast.Name) -> bool:
        """Whether `name` is a declared agent; E101 (with "did you mean") if not."""
        return self._declared(name, self.agents, "E101", "agents")

    def room(self, name: ast.Name) -> bool:
        """Whether `name` is a declared room; E102 (with "did you mean") if not."""
        return self._declared(name, self.rooms, "E102", "rooms")

    def _declared(self, name: ast.Name, declared: list[str], code: str, what: str) -> bool:
        if name.text in declared:
            return True
        self.error(code, f"unknown {what[:-1]} `{name.text}`", name.span,
                   self.suggest(name.text, declared) or f"declare it with `{what} ...`")
        return False

    def present(self, name: ast.Name, doing: str) -> Optional[str]:
        room = self.where.get(name.text)
        if room is None:
            self.error("E121", f"`{name.text}` {doing} but is in no room", name.span,
                       f"add `{name.text} enters ROOM` before this line")
        return room

    def text_of(self, node: ast.Node) -> str:
        """The statement as written (its source span), or in canonical form when it was
        built in code, not parsed."""
        span = node.span
        if span is None or self.lines is None:
            return format_statement(node)
        line = self.lines[span.line - 1] if span and span.line <= len(self.lines) else ""
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        return line[span.column - 1:end].strip()

    def add_event(self, family: type, node: ast.Node, kind: str, witnesses=(),
                  **fields) -> None:
        """Append the next event, of `family` (tomc/dsl/program.py), numbered by step; the
        peeks and distractions before it change its witnesses."""
        if kind not in MODIFIERS:
            witnesses = self.modified(family, node, kind, list(witnesses), fields)
        event = family(step=len(self.events) + 1, kind=kind, text=self.text_of(node),
                       line=_line(node), witnesses=tuple(witnesses), time=self.clock, **fields)
        self.events.append(event)
        if isinstance(getattr(event, "fact", None), Fact):
            self.written = self.written.add(event.fact.key)

    def pending(self) -> list[AnyEvent]:
        """The peeks and distractions since the last other event: they modify the next one
        (read from the events, so a live checker's states keep them too)."""
        found = []
        for event in self._latest_first():
            if event.kind not in MODIFIERS:
                break
            found.append(event)
        return found[::-1]

    def _latest_first(self) -> Iterator[AnyEvent]:
        """The events so far, the latest first (by index: `events` may be a state's being
        extended, which does not iterate)."""
        for index in range(len(self.events) - 1, -1, -1):
            yield self.events[index]

    def modified(self, family: type, node: ast.Node, kind: str, witnesses: list[str],
                 fields: dict) -> list[str]:
        """The witnesses of an event after the peeks and distractions pending before it
        (its `peekers` and `distracted` go into `fields`): an event seen in a room only
        (E175); a peeker from outside it, a distracted agent inside it, not its actor
        (E176)."""
        pending = self.pending()
        if not pending:
            return witnesses
        speech = family is Communication and kind in ("tell", "says", "announce")
        if not (family is Observation or kind == "enter" or speech):
            self.error("E175", f"`{pending[0].text}` (line {pending[0].line}) applies to the "
                       f"next event seen in a room or conversation, and "
                       f"`{self.text_of(node)}` is not one", node.span,
                       "put an `in R:`, `moves`, `sets`, `enters`, `tells`, `says` or "
                       "`announces` right after it")
            return witnesses
        # who acts: the observation's agents, who enters, or the speaker
        actors = (fields["speaker"],) if speech else fields.get("agents", ())
        peekers, distracted = [], []
        for modifier in pending:
            agent = modifier.agents[0]
            if modifier.kind == "peek" and agent in witnesses:
                self.error("E176", f"`{agent}` peeks (line {modifier.line}) but witnesses "
                           f"`{self.text_of(node)}` anyway, "
                           f"{'as a listener' if speech else 'from inside the room'}",
                           node.span, f"remove `{modifier.text}`")
            elif modifier.kind == "distracted" and (agent not in witnesses or agent in actors):
                why = ("does it" if agent in actors else
                       "is not among its listeners" if speech else "is not in its room")
                self.error("E176", f"`{agent}` is distracted (line {modifier.line}) from "
                           f"`{self.text_of(node)}` but {why}", node.span,
                           f"remove `{modifier.text}`")
            else:
                (peekers if modifier.kind == "peek" else distracted).append(agent)
        fields["peekers"] = tuple(dict.fromkeys(peekers))
        fields["distracted"] = tuple(dict.fromkeys(distracted))
        seen = set(witnesses) | set(peekers)
        return [a for a in self.agents if a in seen]

    def fact(self, fact: ast.Fact) -> Fact:
        """A fact as events carry it, with the key's cardinality from the policy."""
        return Fact(fact.key.text, fact.value.text, self.policy.is_many(fact.key.text))

    def occupants(self, room: Optional[str]) -> list[str]:
        """The agents in `room` now (at this point of the replay), in declaration order."""
        return [a for a in self.agents if room is not None and self.where.get(a) == room]

    # events
    def _enter(self, stmt: ast.Enter) -> None:
        ok = self.room(stmt.room) & all([self.agent(a) for a in stmt.agents])
        self._no_repeats(stmt.agents)
        if ok:
            for a in stmt.agents:
                self.where[a.text] = stmt.room.text
        self.add_event(Presence, stmt, "enter", self.occupants(stmt.room.text),
                       agents=tuple(a.text for a in stmt.agents), room=stmt.room.text)

    def _exit(self, stmt: ast.Exit) -> None:
        ok = self.room(stmt.room) & all([self.agent(a) for a in stmt.agents])
        self._no_repeats(stmt.agents)
        if ok:
            for a in stmt.agents:
                here = self.where.get(a.text)
                if here != stmt.room.text:
                    self.error("E120", f"`{a.text}` exits `{stmt.room.text}` but is "
                               + (f"in `{here}`" if here else "in no room"), a.span,
                               f"`{a.text} exits {here}`" if here else "remove this exit")
                self.where[a.text] = None
        self.add_event(Presence, stmt, "exit", agents=tuple(a.text for a in stmt.agents),
                       room=stmt.room.text)

    def _no_repeats(self, names: list[ast.Name]) -> None:
        seen: set[str] = set()
        for name in names:
            if name.text in seen:
                self.error("E110", f"`{name.text}` is listed twice", name.span)
            seen.add(name.text)

    def _observed(self, stmt, kind: str, actor: Optional[ast.Name], room: Optional[str],
                  fact: ast.Fact) -> None:
        """An observation in `room`, seen by its occupants (by the actor alone when the room
        is None: an actor in no room)."""
        actors = (actor.text,) if actor is not None else ()
        witnesses = self.occupants(room) if room is not None else list(actors)
        self.add_event(Observation, stmt, kind, witnesses, agents=actors, room=room,
                       fact=self.fact(fact))

    def _state(self, stmt: ast.State) -> None:
        self.room(stmt.room)
        self._observed(stmt, "state", None, stmt.room.text, stmt.fact)

    def _move(self, stmt: ast.Move) -> None:
        if self.agent(stmt.actor):
            self.present(stmt.actor, "moves something")
        fact = ast.Fact(key=ast.Key(subject=stmt.subject),
                        value=ast.Value(text=stmt.container.text), form="located")
        self._observed(stmt, "move", stmt.actor, self.where.get(stmt.actor.text), fact)

    def _setvalue(self, stmt: ast.SetValue) -> None:
        self.agent(stmt.actor)
        self._observed(stmt, "set", stmt.actor, self.where.get(stmt.actor.text), stmt.fact)

    def _communicated(self, stmt, kind: str, speaker: Optional[str], heard: list[str],
                      source: str, fact: Fact, **fields) -> None:
        """A communication of `fact` from `source`, heard by `heard` (the speaker left out)."""
        listeners = tuple(a for a in heard if a != speaker)
        witnesses = ([speaker] if speaker is not None else []) + list(listeners)
        self.add_event(Communication, stmt, kind, witnesses, speaker=speaker,
                       listeners=listeners, source=source,
                       authority=self.policy.authority(source), fact=fact, **fields)

    def _speech(self, stmt, kind: str, heard: list[str]) -> None:
        speaker = stmt.speaker.text
        about = self.reported(stmt, heard) if stmt.about is not None else None
        self._communicated(stmt, kind, speaker, heard, speaker, self.fact(stmt.fact),
                           about=about)

    def reported(self, stmt, heard: list[str]) -> Optional[str]:
        """The agent a report is about (`S tells L X believes ...`): a declared agent (E101),
        neither the speaker nor a named listener (E131), under a policy of depth 2 or more,
        since its chains are models of X (E130)."""
        about = stmt.about
        if not self.agent(about):
            return about.text
        listener = getattr(stmt, "listener", None)
        if about.text == stmt.speaker.text or (listener is not None
                                               and about.text == listener.text):
            self.error("E131", f"a report about `{about.text}` by or to `{about.text}`",
                       about.span, "report what a third agent believes, or drop "
                       f"`{about.text} believes` to say it as your own")
        if self.policy.depth < 2:
            self.error("E130", f"a report about `{about.text}` updates models of "
                       f"`{about.text}` (chains of 2 agents or more), deeper than the "
                       f"policy's depth {self.policy.depth}", about.span,
                       "use a policy of depth 2 or more")
        return about.text

    def _tell(self, stmt: ast.Tell) -> None:
        if self.agent(stmt.speaker) & self.agent(stmt.listener) and (
                stmt.speaker.text == stmt.listener.text):
            self.error("E131", f"`{stmt.speaker.text}` tells themselves", stmt.listener.span,
                       "name another agent as the listener")
        self._speech(stmt, "tell", [stmt.listener.text])

    def _says(self, stmt: ast.Says) -> None:
        if self.agent(stmt.speaker):
            self.present(stmt.speaker, "says something to the room")
        self._speech(stmt, "says", self.occupants(self.where.get(stmt.speaker.text)))

    def _announce(self, stmt: ast.Announce) -> None:
        self.agent(stmt.speaker)
        self._speech(stmt, "announce", list(self.agents))

    def _claim(self, stmt: ast.Claim) -> None:
        published = self._time(stmt.at, stmt) if stmt.at else None
        valid_from = self._time(stmt.valid_from, stmt) if stmt.valid_from else None
        self._claimed(stmt, self.fact(stmt.fact), published=published, valid_from=valid_from)

    def _endedclaim(self, stmt: ast.EndedClaim) -> None:
        """A source says the fact no longer holds; its valid time ends at `valid to D`,
        else its publication time, else the event's time (else the beginning of time)."""
        published = self._time(stmt.at, stmt) if stmt.at else None
        valid_to = self._time(stmt.valid_to, stmt) if stmt.valid_to else None
        self._claimed(stmt, self.ending(stmt.key, stmt.value), published=published,
                      valid_to=valid_to or published or self.clock or "")

    def _retract(self, stmt: ast.Retract) -> None:
        """`A retracts KEY`: heard by every agent, it ends what was held on A's word."""
        self.agent(stmt.speaker)
        speaker = stmt.speaker.text
        self._communicated(stmt, "retract", speaker, list(self.agents), speaker,
                           self.ending(stmt.key, stmt.value, of=speaker),
                           valid_to=self.clock or "")

    def ending(self, key: ast.Key, value: Optional[ast.Value], of: Optional[str] = None) -> Fact:
        """The fact of an ending: `key` (only `value`, when given) no longer holds."""
        return Fact(key.text, value.text if value is not None else None,
                    self.policy.is_many(key.text), ended=True, of=of)

    def _claimed(self, stmt: ast.Claim | ast.EndedClaim, fact: Fact, **times) -> None:
        """A claim (or ending) from its source, to its audience (default: every agent)."""
        source = stmt.source.text
        if source not in self.policy.authorities and source not in self.agents:
            self.error("E103", f"unknown source `{source}`", stmt.source.span,
                       self.suggest(source, [*self.policy.authorities, *self.agents])
                       or f"declare it in the policy: `source {source} authority N`")
        if stmt.by is not None:
            self.agent(stmt.by)
        heard, room = list(self.agents), None
        if stmt.audience == "room":
            room = stmt.room.text
            heard = self.occupants(room) if self.room(stmt.room) else []
        if stmt.audience == "agents":
            if all([self.agent(a) for a in stmt.recipients]):
                self._no_repeats(stmt.recipients)
            heard = list(dict.fromkeys(a.text for a in stmt.recipients))
        self._communicated(stmt, "claim", stmt.by.text if stmt.by else None, heard, source,
                           fact, room=room, **times)

    def _time(self, text: str, node: ast.Node) -> Optional[str]:
        parsed = parse_time(text)
        if parsed is None:
            self.error("E140", f"`{text}` is not a calendar date or time", node.span,
                       "write YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]")
        return parsed

    def _handoffwrite(self, stmt: ast.HandoffWrite) -> None:
        self._pair(stmt.sender, stmt.receiver, stmt, "a handoff")
        sender, receiver = stmt.sender.text, stmt.receiver.text
        self.add_event(Handoff, stmt, "handoff", [sender, receiver], speaker=sender,
                       listener=receiver, authority=self.policy.authority(sender))

    def _pair(self, first: ast.Name, second: ast.Name, node: ast.Node, what: str) -> None:
        """Two distinct agents whose nested chain (first > second) the policy tracks."""
        if self.agent(first) & self.agent(second) and first.text == second.text:
            self.error("E131", f"{what} needs two different agents", second.span,
                       "name another agent")
        if self.policy.depth < 2:
            self.error("E130", f"{what} reads `{first.text} > {second.text}`, a chain of 2 "
                       f"agents, deeper than the policy's depth {self.policy.depth}", node.span,
                       "use a policy with `depth 2` or more")

    def _wait(self, stmt: ast.Wait) -> None:
        self.agent(stmt.agent)
        self.add_event(Quiet, stmt, "wait", agents=(stmt.agent.text,))

    def _peek(self, stmt: ast.Peek) -> None:
        self.agent(stmt.agent)
        self.modifier_span = stmt.span
        self.add_event(Quiet, stmt, "peek", agents=(stmt.agent.text,))

    def _distracted(self, stmt: ast.Distracted) -> None:
        self.agent(stmt.agent)
        self.modifier_span = stmt.span
        self.add_event(Quiet, stmt, "distracted", agents=(stmt.agent.text,))

    def _noop(self, stmt: ast.Noop) -> None:
        self.add_event(Quiet, stmt, "noop")

    # queries
    def _chain(self, subject: ast.Subject | ast.Explain) -> tuple[str, ...]:
        chain = subject.chain
        for name in chain:
            self.agent(name)
        seen: set[str] = set()
        for name in chain:
            if name.text in seen:
                self.error("E131", f"the chain names `{name.text}` twice", name.span,
                           "a chain's agents are pairwise distinct (docs/semantics.md section 2)")
            seen.add(name.text)
        if len(chain) > self.policy.depth:
            self.error("E130", f"a chain of {len(chain)} agents is deeper than the policy's "
                       f"depth {self.policy.depth}", subject.span,
                       f"use at most {self.policy.depth} agents"
                       + (f", or a policy with `depth {len(chain)}`" if len(chain) <= MAX_DEPTH
                          else f" (no policy tracks more than {MAX_DEPTH})"))
        return tuple(n.text for n in chain)

    def _when(self, stmt) -> tuple[int, Optional[str]]:
        """(step, date) a query is evaluated at: now, `at step N`, `at TIME` (the last event
        at or before it; events before any stated time count as earlier than every time),
        or `on DATE`."""
        step, when = len(self.events), stmt.when
        if when is None:
            return step, None
        if when.date is not None:
            return step, self._time(when.date, when)
        if when.time is not None:
            moment = self._time(when.time, when)
            if moment is None:
                return step, None
            # Times never go back (E148) and untimed events come first: the latest event
            # at or before `moment` is the first such from the end.
            return next((e.step for e in self._latest_first()
                         if e.time is None or e.time <= moment), 0), None
        if when.step > step:
            self.error("E140", f"step {when.step} has not happened yet at this line "
                       f"(last step: {step})", when.span, f"ask at a step from 0 to {step}")
        return min(when.step, step), None

    def _expect(self, stmt: ast.Expect) -> None:
        chain = self._chain(stmt.subject)
        key = stmt.subject.key.text
        many = self.policy.is_many(key)
        if stmt.kind == "set" and not many:
            self.error("E141", f"`{key}` has cardinality one but a set is expected", stmt.span,
                       f"expect a single value, or declare `predicate {key} many`")
        if stmt.kind == "value" and many:
            self.error("E141", f"`{key}` has cardinality many but a single value is expected",
                       stmt.span, f"write `= {{{stmt.values[0].text}}}`")
        for via in (n for v in stmt.values for n in v.via):
            self.agent(via)  # a source is handed on by agents only
        step, on_date = self._when(stmt)
        self.asked.append((key, stmt.subject.key.span))
        aspect = stmt.kind if stmt.kind in ("contested", "supported") else "value"
        self.queries.append(QueryModel(
            kind="expect", chain=chain, key=key, step=step, text=self.text_of(stmt),
            line=_line(stmt), span=stmt.span, expected=tuple(v.support_text for v in stmt.values),
            expect_set=stmt.kind == "set", many=many, aspect=aspect, on_date=on_date))

    def _ask(self, stmt: ast.Ask) -> None:
        chain = self._chain(stmt.subject)
        step, on_date = self._when(stmt)
        key = stmt.subject.key.text
        self.asked.append((key, stmt.subject.key.span))
        self.queries.append(QueryModel(
            kind="ask", chain=chain, key=key, step=step, text=self.text_of(stmt),
            line=_line(stmt), span=stmt.span, many=self.policy.is_many(key),
            on_date=on_date))

    # analyses
    def _arguments(self, analysis) -> dict:
        """The checked arguments of an analysis, as AnalysisQuery fields."""
        match analysis:
            case ast.FalseBeliefs(depth=depth):
                depth = 1 if depth is None else depth
                self._depth(depth, analysis)
                return {"analysis": "false_beliefs", "depth": depth}
            case ast.WhoKnows(key=key):
                self.asked.append((key.text, key.span))
                return {"analysis": "who_knows", "key": key.text}
            case ast.Handoff(sender=sender, receiver=receiver):
                self._pair(sender, receiver, analysis, "a handoff")
                return {"analysis": "handoff", "agents": (sender.text, receiver.text)}
            case ast.CommonGround(first=first, second=second):
                self._pair(first, second, analysis, "common ground")
                return {"analysis": "common_ground", "agents": (first.text, second.text)}
            case ast.Explain(key=key):
                self.asked.append((key.text, key.span))
                return {"analysis": "explain", "chain": self._chain(analysis), "key": key.text}
            case ast.PlanAnnouncements(key=key, speaker=speaker):
                self.agent(speaker)
                self.asked.append((key.text, key.span))
                return {"analysis": "plan_announcements", "key": key.text,
                        "agents": (speaker.text,)}
            case ast.ContextFor(agent=agent, other=other):
                self._pair(agent, other, analysis, "a context")
                return {"analysis": "context_for", "agents": (agent.text, other.text)}
            case ast.Search(text=text):
                return {"analysis": "search", "search": text}
            case ast.WhoKnowsBest(text=text):
                return {"analysis": "who_knows_best", "search": text}
            case ast.About(subject=subject, within=within):
                if within is not None:
                    self._hops("within", within, analysis)
                return {"analysis": "about", "chain": self._chain(analysis),
                        "search": subject.text,
                        "depth": DEFAULT_HOPS if within is None else within}
            case ast.OpenTasks():
                return {"analysis": "open_tasks", "chain": self._chain(analysis)}
            case ast.ExplainFollow(key=key, follow=links):
                self._hops("follow", links, analysis)
                self.asked.append((key.text, key.span))
                return {"analysis": "explain_follow", "chain": self._chain(analysis),
                        "key": key.text, "depth": links}
        raise TypeError(f"not an analysis: {analysis!r}")

    def _hops(self, word: str, hops: int, node: ast.Node) -> None:
        """A walk's `within N` / `follow N`: 0 to MAX_HOPS links (docs/language.md,
        "Links")."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
            self.error("E130", f"`{word} {hops}` is outside 0..{MAX_HOPS}, the links a walk "
                       "may follow", node.span, f"use {word} 0 to {MAX_HOPS}")

    def _depth(self, depth: int, node: ast.Node) -> None:
        if not 1 <= depth <= self.policy.depth:
            self.error("E130", f"depth {depth} is outside 1..{self.policy.depth}, the depths "
                       "the policy tracks", node.span,
                       f"use a depth from 1 to {self.policy.depth}")

    def _askanalysis(self, stmt: ast.AskAnalysis) -> None:
        self.queries.append(AnalysisQuery(
            kind="ask", step=len(self.events), text=self.text_of(stmt), line=_line(stmt),
            span=stmt.span, **self._arguments(stmt.analysis)))

    def _expectanalysis(self, stmt: ast.ExpectAnalysis) -> None:
        arguments = self._arguments(stmt.analysis)
        expected: list[str] = [k.text for k in stmt.keys]
        for item in stmt.believer_keys:
            chain = self._chain(item)
            if stmt.part == "hearsay" and len(chain) != 1:
                self.error("E142", f"`handoff ... hearsay` lists one agent per item (whose "
                           f"belief is handed on), not a chain of {len(chain)}", item.span,
                           f"write `{chain[-1]}: {item.key.text}`")
            elif stmt.part != "hearsay" and len(chain) != arguments["depth"]:
                self.error("E142", f"`false_beliefs depth {arguments['depth']}` lists chains "
                           f"of {arguments['depth']} agent(s), not {len(chain)}", item.span,
                           f"ask `false_beliefs depth {len(chain)}` for this chain")
            expected.append(f"{' > '.join(chain)}: {item.key.text}")
        expected += [f"{item.key.text}: {item.reason}" for item in stmt.excluded]
        if stmt.part == "path":  # any length: a path of tells is not a perspective
            seen: set[str] = set()
            for name in stmt.names:
                if self.agent(name) and name.text in seen:
                    self.error("E131", f"the path names `{name.text}` twice", name.span,
                               "a who-told-whom path reaches each agent once")
                seen.add(name.text)
            expected.append(" > ".join(n.text for n in stmt.names))
        elif stmt.part in ("open", "unclaimed"):  # task subjects, not agents
            expected += [n.text for n in stmt.names]
        else:
            expected += [n.text for n in stmt.names if self.agent(n)]
        if stmt.part == "from_step" and stmt.number > len(self.events):
            self.error("E140", f"step {stmt.number} has not happened yet at this line (last "
                       f"step: {len(self.events)})", stmt.span,
                       f"name a step from 1 to {len(self.events)}")
        if stmt.part == "left":
            self._depth(stmt.depth, stmt)
        if stmt.part in ("from_step", "left"):
            expected.append(str(stmt.number))
        if stmt.part == "best":
            expected.append(stmt.plan)
        self.queries.append(AnalysisQuery(
            kind="expect", step=len(self.events), text=self.text_of(stmt), line=_line(stmt),
            span=stmt.span, part=stmt.part, plan=stmt.plan if stmt.part == "left" else None,
            plan_depth=stmt.depth, expected=tuple(expected), **arguments))

    # procedures and readiness (docs/language.md, "Procedures")
    def _procedure(self, stmt: ast.Procedure) -> None:
        problems = check_procedures([stmt], set(self.procedures), self.path)
        for problem in problems:
            self.error(problem.code, problem.message, problem.span, problem.hint)
        if not problems:
            self.procedures[stmt.name.text] = procedure_model(stmt)

    def _ready(self, stmt: ast.AskReady | ast.ExpectReady, kind: str, **fields) -> None:
        ready = stmt.ready
        chain = self._chain(ready)
        step, on_date = self._when(stmt)
        procedure = self.procedures.get(ready.procedure.text)
        if procedure is None:
            self.error("E170", f"unknown procedure `{ready.procedure.text}`",
                       ready.procedure.span,
                       self.suggest(ready.procedure.text, self.procedures)
                       or "declare it above with `procedure NAME { requires KEY = VALUE }`, "
                          "in the scenario or its policy")
            return
        self.queries.append(ReadyQuery(
            kind=kind, procedure=procedure, chain=chain, step=step, text=self.text_of(stmt),
            line=_line(stmt), span=stmt.span, on_date=on_date, **fields))

    def _askready(self, stmt: ast.AskReady) -> None:
        self._ready(stmt, "ask")

    def _expectready(self, stmt: ast.ExpectReady) -> None:
        expected = (stmt.verdict,) if stmt.part == "verdict" else tuple(k.text for k in stmt.keys)
        self._ready(stmt, "expect", part=stmt.part, expected=expected)
