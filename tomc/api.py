"""The Python API: a scenario held live, or a named memory shared by many processes.

    from tomc.api import Session

    # a memory that outlives this process (created on first attach, with its policy)
    with Session.attach("support", db="unix:///srv/tomc/redis.sock") as memory:
        memory.apply("agents Maya, Billing\\nrooms chat")
        memory.enter(["Maya", "Billing"], "chat")
        memory.says("Billing", "refund_4411.status", "approved")
        print(memory.believes("Maya", "refund_4411.status").values)

    # a file run first, its graphs replaced (what `tomc run` does), then live events
    with Session.open("scenarios/refund_handoff.tom") as session:
        session.apply("Finance sets refund_4411.status = rejected")

`apply` takes .tom statements (events, `agents` / `rooms`), as text or AST, checked against
the scenario so far with the checks of `tomc check`: bad input raises `TomError` and writes
nothing. Each statement is then committed on its own (an event is one step); several
processes may write one memory, and every event gets its own step (tomc/engine/live.py,
docs/storage.md). `ask` answers an `ask` or `expect` line; the typed methods build the
statement for you. `Session.attach(name, as_agent="Maya")` answers only from Maya's mind
graph, and refuses the rest with `AccessDenied`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
import uuid
import warnings
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Optional, Sequence, Union

import pydantic

from tomc.analysis import answer as analyses
from tomc.analysis.about import About as AboutAnswer
from tomc.analysis.announcements import AnnouncementPlan
from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.best import Ranking
from tomc.analysis.common_ground import CommonGround
from tomc.analysis.context import Context
from tomc.analysis.explain import Explanation
from tomc.analysis.false_beliefs import FalseBeliefs
from tomc.analysis.follow import Evidence
from tomc.analysis.handoff import HandoffReceipt
from tomc.analysis.search import DEFAULT_LIMIT, SearchResult
from tomc.analysis.tasks import OpenTasks as OpenTasksAnswer
from tomc.analysis.view import BeliefView
from tomc.analysis.who_knows import WhoKnows
from tomc.answers import Answer
from tomc.beliefs import Held
from tomc.describe import Description, describe
from tomc.dsl import ast, build
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_statement
from tomc.dsl.parser import read_source
from tomc.dsl.program import AnyEvent, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine import event_codec
from tomc.engine import factory as engines
from tomc.engine.base import EngineName
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.live import CHANGES, DECLARATIONS, QUESTIONS, LiveScenario
from tomc.memory import catalog, submit, writes
from tomc.memory.environment import Environment, check_new_memory
from tomc.memory.meaning import recalled
from tomc.memory.opening import (
    Statements,
    header_for,
    name_text,
    refuse,
    refused_hint,
    statements_of,
)
from tomc.memory.readers import CredentialReader, EngineReader
from tomc.memory.replies import Reply
from tomc.readiness import ReadyAnswer
from tomc.runtime import search_index
from tomc.runtime.connection import Database
from tomc.runtime.errors import (
    AccessDenied,
    DatabaseUnavailable,
    Replaced,
    StaleWrite,
    TomError,
)
from tomc.runtime.keys import memory_key

__all__ = ["Session", "TomError", "TomWarning", "check_new_memory", "AccessDenied", "StaleWrite",
           "DatabaseUnavailable"]

# Questions read from one perspective's graph, checked against the revision in the same
# round trip (engine.answer_if_current / ready_if_current).
_DIRECT = {ast.Ask: "answer_if_current", ast.Expect: "answer_if_current",
           ast.AskReady: "ready_if_current", ast.ExpectReady: "ready_if_current"}


def _bad_input(method):
    """A typed method whose arguments tomc/dsl/build.py checks: its DiagnosticError (E143)
    is raised as TomError, like bad .tom text."""

    @functools.wraps(method)
    def checked(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except DiagnosticError as err:
            raise TomError(err.diagnostics) from None
        except pydantic.ValidationError as err:  # an argument of the wrong type (at=5)
            problem = err.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "an argument"
            raise TomError([Diagnostic("E143", f"{where}: {problem['msg']}, got "
                                       f"{problem.get('input')!r}", None, build.PATH,
                                       hint="pass names, keys and times as text (a time "
                                            "as 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM')")]) \
                from None

    return checked


def _serialised(method):
    """A method that uses the session's checker or its writer connection: one thread at a
    time (threads may share a session; each call sees the state the previous one left)."""

    @functools.wraps(method)
    def one_at_a_time(self, *args, **kwargs):
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except Replaced as err:
                error = TomError([Diagnostic(
                    "E145", f"memory {self.memory!r} was dropped or created again since "
                    "this session attached", None, f"memory {self.memory}",
                    hint="attach again (Session.attach) to use the memory as it is now")])
                error.committed = err.committed
                raise error from err

    return one_at_a_time


class TomWarning(UserWarning):
    """A question that is valid but most likely not what was meant (W180: a key no event
    has written); its message is the rendered diagnostic. `Session.strict` raises TomError
    instead."""


class Session:
    """A scenario held live, on FalkorDB or the reference interpreter.

    Make one with `Session.open` (a file or an empty scenario, replaced and run) or
    `Session.attach` (a named memory, kept); use it as a context manager or call `close()`.
    `agent` is the agent this session answers as (None: every mind).
    """

    def __init__(self, live: LiveScenario, stack: ExitStack, name: Optional[str],
                 reader: EngineReader):
        # `strict`: a warning about a question (W180, a key no event wrote) raises TomError
        # instead (default: $TOMC_STRICT set to 1/true/yes, as the CLI's --strict).
        self.strict = os.environ.get("TOMC_STRICT", "").lower() in ("1", "true", "yes")
        # The warnings of the last question answered (also issued as TomWarning).
        self.warnings: list[Diagnostic] = []
        self._live = live
        self._stack = stack
        self._lock = threading.RLock()
        self.memory = name
        self._reader = reader  # built by the Environment (tomc/memory/environment.py)
        self.agent = self._reader.agent
        # Writes through an applier leave this session's checker behind (until it reads:
        # `_caught_up`); `_applied` is the last step they reached.
        self._behind = False
        self._applied = 0
        self._replied_at: Optional[float] = None  # the applier's last reply (monotonic)

    # ---------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: Union[str, Path, None] = None, *, scenario: Optional[str] = None,
             db: Union[Database, str, None] = None, data_dir: Optional[Path] = None,
             policy: str = "default", name: str = "live",
             engine: EngineName = "falkordb") -> "Session":
        """A scenario run now, its graphs (`tom:<scenario>:...`) replaced: `path`, a .tom
        file whose scenario (its only one, or the one called `scenario`) is run first;
        None, an empty scenario called `name` under `policy` (a shipped policy's name or a
        .tom file defining one), whose agents and rooms you declare with `apply`.

        `db`: a Database, a FalkorDB URL, or None for `$FALKORDB_URL`, else an embedded
        FalkorDB in `data_dir`. Raises TomError (errors in the file or policy), ValueError
        (no such scenario or engine), DatabaseUnavailable."""
        engines.stored(engine)  # ValueError: no such engine, before anything is read
        if path is None:
            text, origin = header_for(name_text(name), policy), "<session>"
        else:
            origin = str(path)
            try:
                text = read_source(path)
            except DiagnosticError as err:
                raise TomError(err.diagnostics) from None
        stack = ExitStack()
        try:
            env = stack.enter_context(Environment(db, data_dir))
            held = env.run(text, origin, scenario, engine)
            stack.enter_context(closing(held.live.engine))
        except BaseException:
            stack.close()
            raise
        return cls(held.live, stack, held.name, held.reader)

    @classmethod
    def attach(cls, name: str, *, db: Union[Database, str, None] = None,
               data_dir: Optional[Path] = None, policy: Optional[str] = None,
               as_agent: Optional[str] = None, create: bool = True) -> "Session":
        """The memory called `name`, kept on FalkorDB (`tomem:{<name>}:...`): opened as it was
        left (agents, rooms, policy, every event), or created with `policy` (default
        `default`) when there is none (and `create`). A half-applied event left by a
        crashed writer is undone first (tomc/engine/recovery.py).

        `as_agent`: answer only from that agent's mind graph (its FalkorDB user is made
        too, for its credential: tomc/memory/acl.py); writes and questions about other
        minds raise AccessDenied. `db` may be the agent's own credential (`tomc token
        credential`), whose user runs no query: its reads are run by the memory's applier
        (tomc/memory/served_reads.py):
        the session is then built from the agent's view of the world
        (tomc/memory/agent_live.py), and its `tell`/`says` as the agent go through the
        memory's applier. Raises TomError (bad name or policy, a policy other than the
        memory's), DatabaseUnavailable, LookupError (no such memory and not `create`)."""
        stack = ExitStack()
        try:
            env = stack.enter_context(Environment(db, data_dir))
            held = env.attach(name, policy, as_agent, create)
            stack.enter_context(closing(held.live.engine))
        except BaseException:
            stack.close()
            raise
        return cls(held.live, stack, held.name, held.reader)

    @classmethod
    def load(cls, name: str, path: Union[str, Path], *, db: Union[Database, str, None] = None,
             data_dir: Optional[Path] = None, scenario: Optional[str] = None,
             replace: bool = False) -> "Session":
        """A new memory `name` holding the scenario of the .tom file `path` (an export of
        a memory, or any scenario file: its only scenario, or the one called `scenario`),
        attached: its policy (a file's or inline policy written out in full), agents, rooms
        and every event, with the times the file states. Its questions are not kept.

        The file is checked whole before anything is written. Raises TomError (the file's
        errors; a statement a memory does not take, E144; a memory `name` that exists,
        E110, unless `replace`, which drops it first), DatabaseUnavailable."""
        stack = ExitStack()
        try:
            env = stack.enter_context(Environment(db, data_dir))
            held = env.load(name, path, scenario, replace)
            stack.enter_context(closing(held.live.engine))
        except BaseException:
            stack.close()
            raise
        return cls(held.live, stack, held.name, held.reader)

    # ---------------------------------------------------------------- state

    @property
    def scenario(self) -> ScenarioModel:
        """The scenario so far: its agents, rooms, policy and events (for a session reading
        as an agent, only the events it witnessed, as `history()`)."""
        self._caught_up()
        return self._reader.scenario(self.history)

    @property
    def own_credential(self) -> bool:
        """Whether this session was attached with an agent's own credential alone: it reads
        as that agent and speaks as it through the memory's applier (tomc/memory/readers.py
        `CredentialReader`), and no supervisor session can be attached beside it."""
        return isinstance(self._reader, CredentialReader)

    @property
    def step(self) -> int:
        """How many events have happened (as far as this session knows)."""
        with self._lock:
            return max(self._live.step, self._applied)

    @_serialised
    def refresh(self) -> None:
        """Take in what other writers committed since this session last wrote or read:
        their events, not every mind's state (a read finds its chain's owner by itself; a
        write loads the state before it compiles)."""
        self._live.catch_up()
        self._behind = False

    def _caught_up(self) -> None:
        """Refresh if this session's own writes through an applier are not taken in yet."""
        if self._behind:
            self.refresh()

    # ---------------------------------------------------------------- writing

    @_serialised
    def apply(self, statements: Statements, after_step: Optional[int] = None,
              idempotency_key: Optional[str] = None) -> list[AnyEvent]:
        """Check, then commit, `statements` (.tom text, or AST statements): events, `agents`
        and `rooms` lines, in order; returns the events with their steps.

        `after_step`: the step this write expects to follow; if another writer got there
        first, StaleWrite is raised and nothing is written. `idempotency_key` (a memory's):
        the write's name, stored with each statement it commits; a write retried with the
        same key applies only what did not commit and returns the original steps of the
        rest (docs/storage.md, "Retries"). On a memory that `tomc serve` serves, the write
        is submitted to the memory's applier (tomc/memory/applier.py). Raises TomError (bad
        input: nothing written; E145, a memory dropped since attach), AccessDenied (a
        session reading as an agent), StaleWrite, DatabaseUnavailable; an error after part
        of a batch committed carries those events in `committed`."""
        self._writable()
        text, parsed = statements_of(statements)
        if after_step is not None and (isinstance(after_step, bool)
                                       or not isinstance(after_step, int) or after_step < 0):
            raise TomError([Diagnostic("E143", f"after_step must be a step number, got "
                                       f"{after_step!r}", None, build.PATH)])
        if idempotency_key is not None and (not isinstance(idempotency_key, str)
                                            or not idempotency_key):
            raise TomError([Diagnostic("E143", f"idempotency_key must be non-empty text, got "
                                       f"{idempotency_key!r}", None, build.PATH)])
        refuse(parsed, text, self.memory is not None)
        try:
            if self.memory is None:
                return self._live.apply(parsed, "<apply>", after_step)
            key = idempotency_key or uuid.uuid4().hex
            db = self._live.engine.db  # on a cluster, the memory's shard
            # An agent's own credential was found served by `_writable`, and can write
            # only through the applier.
            if self.own_credential or self._served(db):
                try:
                    return self._submitted(text or "\n".join(format_statement(s)
                                                              for s in parsed),
                                           after_step, key,
                                           any(isinstance(s, DECLARATIONS) for s in parsed))
                except submit.NoApplier:
                    if self.own_credential:
                        raise AccessDenied(
                            f"{self._reader.submits_as}'s own credential writes only through "
                            f"the memory's applier, and none took the write (is `tomc serve` "
                            "running? docs/security.md)") from None
                    # withdrawn: nothing of it applied; write it here
            # Here, only the administrator's credential writes (an agent's goes through the
            # applier, above).
            done = writes.recorded(db, self.memory, writes.ADMIN, key, parsed) \
                if idempotency_key else [None] * len(parsed)
            return writes.write(self._live, self.memory, parsed, writes.ADMIN, key,
                                after_step, done)
        except DiagnosticError as err:
            error = TomError(err.diagnostics, text)
            error.committed = getattr(err, "committed", [])
            raise error from None

    def _served(self, db: Database) -> bool:
        """Whether the memory's applier takes this session's writes: as seen with its last
        reply or this session's last commit, if within `submit.LOOKED_S`; else asked (one
        round trip)."""
        if self._replied_at is not None and \
                time.monotonic() - self._replied_at <= submit.LOOKED_S:
            return True
        served = self._live.engine.served(submit.LOOKED_S)
        if served is None:
            with db.redirected(memory_key(self.memory)):  # a lost node: exit 3
                served = submit.serving(db.redis, self.memory if db.clustered else None)
        return served

    def _submitted(self, text: str, after_step: Optional[int], key: str,
                   declares: bool) -> list[AnyEvent]:
        """A write through the memory's applier: its events (taken in by catching up), or
        its error raised as the embedded path raises it."""
        engine = self._live.engine
        reply = Reply.of(submit.submit(
            engine.db.redis, self.memory, text, key, after_step,
            incarnation=engine.incarnation[1], as_agent=self._reader.submits_as,
            clustered=engine.db.clustered, wait_replicas=engine.db.options.wait_replicas))
        self._replied_at = time.monotonic()
        if reply.error is None and not declares:
            # The applier's events, whole: this session's checker takes them in when it
            # next reads (it is behind until then), not by replaying every writer's now.
            self._behind = True
            self._applied = max([self._applied, *(e["step"] for e in reply.events)])
            return [event_codec.load(e) for e in reply.whole]
        if reply.error is None or reply.committed:
            self._live.catch_up()
        if reply.error is None:
            return [self._live.scenario.events[e["step"] - 1] for e in reply.events]
        found = reply.failure()
        found.committed = [self._live.scenario.events[e["step"] - 1] for e in reply.committed]
        raise found

    @_serialised
    def check(self, statements: Statements) -> list[Diagnostic]:
        """The diagnostics of `statements` (events, declarations or questions) after the
        scenario so far, without applying anything: [] when they are valid, else errors,
        or only warnings (W180) when they are valid but most likely misspelt."""
        try:
            text, parsed = statements_of(statements, "<check>")
        except TomError as err:
            return err.diagnostics
        self._caught_up()
        clock = next((s for s in parsed if isinstance(s, ast.Clock)), None)
        if clock is not None:  # as `apply` refuses it
            return [Diagnostic("E144", f"a session takes no `{format_statement(clock)}` line",
                               clock.span, "<check>", hint=refused_hint(clock))]
        if self.agent is not None:
            # From the agent's view: a write is refused as `apply` refuses it, before the
            # checker could say where others are (who is in which room) or what they did.
            write = next((s for s in parsed if not isinstance(s, QUESTIONS)), None)
            if write is not None:
                return [Diagnostic(
                    "E144", f"this session reads as {self.agent}: it writes nothing, so "
                    f"`{format_statement(write)}` is not checked here", write.span, "<check>",
                    hint="check writes with a supervisor session")]
        checker = self._live.checker
        mark = checker.mark()
        try:
            checker.add(parsed, (*CHANGES, *QUESTIONS), text, "<check>")
            return self._visible_warnings()
        except DiagnosticError as err:
            return err.diagnostics
        except ValueError as err:
            return [Diagnostic("E144", str(err), None, "<check>")]
        finally:
            checker.reset(mark)

    @_serialised
    def check_each(self, statements: Sequence[ast.Node],
                   kept: Optional[Sequence[bool]] = None) -> list[list[Diagnostic]]:
        """The diagnostics of each of `statements` (AST events and declarations), each
        checked after the scenario so far and the valid ones before it that are `kept`
        (default: all), without applying anything: [] for a statement that would apply.
        What `tomc extract` shows before writing: a candidate that fails does not hide the
        ones after it, and one that will not be written is not assumed by them."""
        self._caught_up()
        checker = self._live.checker
        start = checker.mark()
        found: list[list[Diagnostic]] = []
        try:
            for statement in statements:
                if self.memory is not None and isinstance(statement, (ast.Peek,
                                                                      ast.Distracted)):
                    found.append([Diagnostic(
                        "E144", "a memory takes events and agents/rooms lines, not "
                        f"`{format_statement(statement)}`", None, "<check>",
                        hint=refused_hint(statement))])
                    continue
                before = checker.mark()
                try:
                    checker.add([statement], CHANGES, None, "<check>")
                    found.append([])
                    if kept is not None and not kept[len(found) - 1]:
                        checker.reset(before)
                except DiagnosticError as err:
                    checker.reset(before)
                    found.append(err.diagnostics)
                except ValueError as err:
                    checker.reset(before)
                    found.append([Diagnostic("E144", str(err), None, "<check>")])
        finally:
            checker.reset(start)
        return found

    @_bad_input
    def enter(self, agents: Union[str, Sequence[str]], room: str) -> AnyEvent:
        """`AGENTS enter ROOM`."""
        return self._one(ast.Enter(agents=build.names(agents), room=build.name(room, "room")))

    @_bad_input
    def exit(self, agents: Union[str, Sequence[str]], room: str) -> AnyEvent:
        """`AGENTS exit ROOM`."""
        return self._one(ast.Exit(agents=build.names(agents), room=build.name(room, "room")))

    @_bad_input
    def set(self, agent: str, key: str, value: object) -> AnyEvent:
        """`AGENT sets KEY = VALUE`: the truth changes, seen by the agent's room."""
        return self._one(ast.SetValue(actor=build.name(agent), fact=build.fact(key, value)))

    @_bad_input
    def tell(self, speaker: str, listener: str, key: str, value: object, *,
             about: Optional[str] = None) -> AnyEvent:
        """`SPEAKER tells LISTENER KEY = VALUE`: a private message; with `about` X, the
        report `SPEAKER tells LISTENER X believes KEY = VALUE` (docs/language.md, "Reports")."""
        return self._one(ast.Tell(speaker=build.name(speaker), listener=build.name(listener),
                                  fact=build.fact(key, value),
                                  about=None if about is None else build.name(about)))

    @_bad_input
    def says(self, speaker: str, key: str, value: object) -> AnyEvent:
        """`SPEAKER says KEY = VALUE`: heard by whoever is in the speaker's room."""
        return self._one(ast.Says(speaker=build.name(speaker), fact=build.fact(key, value)))

    @_bad_input
    def announce(self, speaker: str, key: str, value: object) -> AnyEvent:
        """`SPEAKER announces KEY = VALUE`: heard by every agent."""
        return self._one(ast.Announce(speaker=build.name(speaker), fact=build.fact(key, value)))

    @_bad_input
    def claim(self, source: str, key: str, value: object, *, by: Optional[str] = None,
              at: Optional[str] = None, valid_from: Optional[str] = None) -> AnyEvent:
        """`claim KEY = VALUE from SOURCE [by AGENT] [at T] [valid from D]`, to every
        agent."""
        return self._one(ast.Claim(fact=build.fact(key, value),
                                   source=build.name(source, "source"),
                                   by=build.name(by) if by is not None else None,
                                   at=at, valid_from=valid_from))

    @_bad_input
    def claim_ended(self, source: str, key: str, value: object = None, *,
                    by: Optional[str] = None, at: Optional[str] = None,
                    valid_to: Optional[str] = None) -> AnyEvent:
        """`claim KEY [= VALUE] ended from SOURCE [by AGENT] [at T] [valid to D]`, to every
        agent: the fact (only VALUE, when given) no longer holds."""
        ended = None if value is None else build.value(value)
        return self._one(ast.EndedClaim(key=build.key(key), value=ended,
                                        source=build.name(source, "source"),
                                        by=build.name(by) if by is not None else None,
                                        at=at, valid_to=valid_to))

    @_bad_input
    def retract(self, speaker: str, key: str, value: object = None) -> AnyEvent:
        """`SPEAKER retracts KEY [= VALUE]`: heard by every agent, it ends what they held
        on the speaker's word."""
        return self._one(ast.Retract(speaker=build.name(speaker), key=build.key(key),
                                     value=None if value is None else build.value(value)))

    def _one(self, statement: ast.Node) -> AnyEvent:
        return self.apply([statement])[0]

    def _writable(self) -> None:
        self._reader.writable()

    # ---------------------------------------------------------------- questions

    @_serialised
    def ask(self, question: Union[str, ast.Node]) -> Union[Answer, AnalysisAnswer,
                                                           ReadyAnswer]:
        """Answer one `ask` or `expect` (text, the leading `ask` may be left out; or AST)
        from the beliefs as they are now. Raises TomError on bad input, AccessDenied for
        a question an agent session may not ask."""
        if isinstance(question, str):
            line = question.strip()
            if not line.startswith(("ask ", "expect ")):
                line = "ask " + line
            text, parsed = statements_of(line, "<ask>")
        else:
            text, parsed = statements_of(question, "<ask>")
        if len(parsed) != 1 or not isinstance(parsed[0], QUESTIONS):
            raise TomError([Diagnostic("E144", "ask takes exactly one ask or expect", None,
                                       "<ask>", hint="record events with apply()")], text)
        # A belief or readiness read checks, in its own round trip, that no other writer
        # committed since this session's state (engine.answer_if_current); anything else
        # catches up first.
        direct = _DIRECT.get(type(parsed[0]))
        fast = self._reader.direct and direct is not None
        if not fast:
            self.refresh()
        query = self._question(parsed, text, retry=fast)
        if fast:
            found = getattr(self._live.engine, direct)(query)
            if found is not None:
                return found
            self.refresh()
            query = self._question(parsed, text, retry=False)
        if isinstance(query, QueryModel):
            return self._reader.belief(query)
        if isinstance(query, ReadyQuery):
            return self._reader.ready(query)
        if query.analysis == "search" and self.agent is not None:
            # its own mind only, through its own user (Session.search)
            return analyses.answer(self._mind_view(), query,
                                   self.search(query.search, mode="text"))
        return self._reader.analysis(query, self.step)

    def _question(self, parsed: list, text: str, retry: bool):
        """The checked question; with `retry`, one that does not check is checked again
        after taking in other writers' changes (it may name an agent they declared). Its
        warnings go to `self.warnings` and are issued as TomWarning (TomError if strict)."""
        try:
            _, found = self._live.checker.add(parsed, QUESTIONS, text, "<ask>")
        except DiagnosticError as err:
            if retry:
                self.refresh()
                return self._question(parsed, text, retry=False)
            raise TomError(err.diagnostics, text) from None
        self.warnings = [dataclasses.replace(d, source=text) for d in self._visible_warnings()]
        if self.warnings and self.strict:
            raise TomError([dataclasses.replace(d, severity="error") for d in self.warnings],
                           text)
        for warning in self.warnings:
            warnings.warn(TomWarning(warning.render(None)), stacklevel=4)
        return found[0]

    def _visible_warnings(self) -> list[Diagnostic]:
        """The last checked question's warnings; for a session reading as an agent,
        computed from the events it witnessed only (the closest keys must not name a key
        only another mind heard of)."""
        checker = self._live.checker
        return checker.warnings if self.agent is None else checker.warnings_for(self.agent)

    def _mind_view(self) -> BeliefView:
        """What this session may read now, as a view: every mind, or (reading as an agent)
        its own mind through its own FalkorDB user."""
        return self._reader.mind_view(self.scenario, self.step)

    @_bad_input
    def ready(self, procedure: str, *, for_: Union[str, Sequence[str], None] = None,
              at_step: Optional[int] = None, on: Optional[str] = None,
              at: Optional[str] = None) -> ReadyAnswer:
        """`ask ready PROCEDURE [for CHAIN]`: whether the procedure (declared in the
        scenario or its policy) can run, from the truth or from `for_` (an agent, or agents
        outermost first): now, as of step `at_step` or time `at` (knowledge time: the last
        event at or before it), or valid on date `on`. The answer has
        the verdict (`ready`, `blocked`, `unknown`), `blockers`, `unknown` and each step
        with its values, sources, authority and caveats (docs/language.md, "Procedures and
        readiness")."""
        chain = build.names(for_) if for_ is not None else []
        return self._ask(ast.AskReady(
            ready=ast.Ready(procedure=build.name(procedure, "procedure name"), chain=chain),
            when=build.when(at_step, on, at)))

    @_bad_input
    def believes(self, chain: Union[str, Sequence[str]], key: str, *,
                 at_step: Optional[int] = None, on: Optional[str] = None,
                 at: Optional[str] = None) -> Answer:
        """What `chain` (an agent, or agents outermost first) believes about `key`: now, as
        of step `at_step` or time `at` (knowledge time: the last event at or before it), or
        valid on date `on` (valid time); each value with its provenance."""
        return self._ask(ast.Ask(subject=ast.Subject(chain=build.names(chain),
                                                     key=build.key(key)),
                                 when=build.when(at_step, on, at)))

    @_bad_input
    def truth(self, key: str, *, at_step: Optional[int] = None,
              on: Optional[str] = None, at: Optional[str] = None) -> Answer:
        """What an omniscient observer holds about `key`."""
        return self._ask(ast.Ask(subject=ast.Subject(key=build.key(key)),
                                 when=build.when(at_step, on, at)))

    @_serialised
    def beliefs(self, chain: Union[str, Sequence[str]],
                at_step: Optional[int] = None) -> list[Held]:
        """Every version `chain` (an agent, or agents outermost first) holds now (or after
        step `at_step`), every key, sorted by key and value, each with its provenance (step,
        kind, source, support, authority, rivals). A session reading as an agent may ask
        only chains that start with that agent, and reads them through its own FalkorDB
        user."""
        try:
            wanted = tuple(n.text for n in build.names(chain))
        except DiagnosticError as err:
            raise TomError(err.diagnostics) from None
        self._reader.chain(wanted)
        self.refresh()
        if wanted not in set(self.scenario.chains()):
            raise TomError([Diagnostic(
                "E130", f"no chain {' > '.join(wanted)} in this memory: agents are "
                f"{', '.join(self.scenario.agents) or 'none yet'}, depth "
                f"{self.scenario.policy.depth}", None, build.PATH)])
        view = self._reader.mind_view(self.scenario, self._step_of(at_step))
        return sorted(view.held([wanted]), key=lambda h: (h.key, h.value))

    @_serialised
    def history(self) -> list[AnyEvent]:
        """The events so far, in step order, each with its step, kind, .tom text and
        witnesses; a session reading as an agent sees the events it witnessed."""
        self.refresh()
        return self._reader.events(list(self._live.scenario.events))

    @_serialised
    def view(self, at_step: Optional[int] = None) -> BeliefView:
        """The beliefs as they are now (or after step `at_step`, knowledge time: a replay),
        for the analyses in tomc/analysis/."""
        self._caught_up()
        return self._reader.view(self._step_of(at_step))

    def _step_of(self, at_step: Optional[int]) -> int:
        """`at_step` checked against the steps so far (now when None); TomError if out of
        range."""
        if at_step is None:
            return self.step
        if isinstance(at_step, bool) or not isinstance(at_step, int) \
                or not 0 <= at_step <= self.step:
            raise TomError([Diagnostic("E143", f"at_step must be a step from 0 to {self.step}, "
                                       f"got {at_step!r}", None, build.PATH)])
        return at_step

    @_bad_input
    def false_beliefs(self, depth: int = 1) -> FalseBeliefs:
        """`ask false_beliefs depth N`."""
        return self._analysis(ast.FalseBeliefs(depth=depth))

    @_bad_input
    def who_knows(self, key: str) -> WhoKnows:
        """`ask who_knows KEY`."""
        return self._analysis(ast.WhoKnows(key=build.key(key)))

    @_bad_input
    def handoff(self, sender: str, receiver: str) -> HandoffReceipt:
        """`ask handoff SENDER -> RECEIVER`: what would be sent, and the receipt."""
        return self._analysis(ast.Handoff(sender=build.name(sender),
                                          receiver=build.name(receiver)))

    @_bad_input
    def handoff_write(self, sender: str, receiver: str) -> HandoffReceipt:
        """`handoff SENDER -> RECEIVER write`: send it, as an event; returns the receipt of
        what was sent."""
        receipt = self.handoff(sender, receiver)
        self.apply([ast.HandoffWrite(sender=build.name(sender),
                                     receiver=build.name(receiver))])
        return receipt

    @_bad_input
    def common_ground(self, first: str, second: str) -> CommonGround:
        """`ask common_ground A, B`."""
        return self._analysis(ast.CommonGround(first=build.name(first),
                                               second=build.name(second)))

    @_bad_input
    def explain(self, chain: Union[str, Sequence[str]], key: str) -> Explanation:
        """`ask explain CHAIN KEY`."""
        return self._analysis(ast.Explain(chain=build.names(chain), key=build.key(key)))

    @_bad_input
    def plan_announcements(self, key: str, speaker: str) -> AnnouncementPlan:
        """`ask plan_announcements KEY by SPEAKER` (simulated on forks of the live graphs)."""
        return self._analysis(ast.PlanAnnouncements(key=build.key(key),
                                                    speaker=build.name(speaker)))

    @_bad_input
    def context_for(self, agent: str, other: str) -> Context:
        """`ask context_for AGENT talking_to OTHER`; the block is its `.text`. A session
        reading as an agent may ask it for itself (it reads only that agent's mind)."""
        return self._analysis(ast.ContextFor(agent=build.name(agent),
                                             other=build.name(other)))

    @_serialised
    def describe(self) -> Description:
        """What this memory has (docs/language.md, "Describe"): agents, rooms, sources with
        their authority, procedures, the keys written so far (events, last step), policy
        and depth; reading as an agent, only keys from events it witnessed."""
        self.refresh()
        return describe(self.scenario, self.step, self.agent)

    @_serialised
    def search(self, text: str, *, limit: int = DEFAULT_LIMIT, mode: Optional[str] = None,
               about: Optional[str] = None) -> SearchResult:
        """Versions (key, value, source) and events (.tom text) matching `text`, ranked
        (docs/language.md, "Search"): each hit with its key, value, holder chain, step,
        time, event and source. A session reading as an agent searches its own mind graph
        only (no truth, no events it might not have witnessed). `mode` `meaning` or
        `hybrid` ranks by meaning too, near the subject `about` if given (tomc/memory/
        meaning.py; default: hybrid when an embedder is configured, else text)."""
        if not isinstance(text, str) or isinstance(limit, bool) or not isinstance(limit, int) \
                or limit < 1 or not isinstance(about, (str, type(None))):
            raise TomError([Diagnostic("E143", f"search takes text and a limit of at least 1, "
                                       f"got {text!r}, {limit!r}", None, build.PATH)])
        self.refresh()
        engine = self._live.engine
        minds = [self.agent] if self.agent is not None else list(self.scenario.agents)
        everything = self.agent is None
        if isinstance(engine, FalkorEngine) and not everything:  # the agent's user cannot
            search_index.ensure(engine.db, engine.graphs, minds, world=False)
        return recalled(self._mind_view(), engine, text, minds, everything, limit, mode, about)

    def who_knows_best(self, topic: str) -> Ranking:
        """`ask who_knows_best "TOPIC"`: agents ranked by the true values about the topic
        that name them, their authorship, and what they hold (docs/language.md, "Who knows
        best"); ties are said in `.ties`."""
        if not isinstance(topic, str):
            raise TomError([Diagnostic("E143", f"topic must be text, got {topic!r}", None,
                                       build.PATH)])
        return self._analysis(ast.WhoKnowsBest(text=topic))

    @_bad_input
    def open_tasks(self, chain: Union[str, Sequence[str], None] = None) -> OpenTasksAnswer:
        """`ask open_tasks [for CHAIN]`: the tasks the truth (or `chain`) believes open,
        each claimed or not, with findings (docs/language.md, "Open tasks"). A session
        reading as an agent asks for chains that start with it."""
        names = build.names(chain) if chain is not None else []
        return self._analysis(ast.OpenTasks(chain=names))

    @_bad_input
    def about(self, subject: str, *, for_: Union[str, Sequence[str], None] = None,
              within: int = 2) -> AboutAnswer:
        """`ask about SUBJECT [for CHAIN] within N`: the facts held within N links
        (values `"@NAME"`) of a subject, each with its path, source and step (docs/
        language.md, "Links")."""
        chain = build.names(for_) if for_ is not None else []
        return self._analysis(ast.About(subject=build.name(subject, "subject"), chain=chain,
                                        within=within))

    @_bad_input
    def follow(self, key: str, *, for_: Union[str, Sequence[str], None] = None,
               hops: int = 2) -> Evidence:
        """`ask explain [CHAIN] KEY follow N`: the evidence walk from KEY through its links
        (values `"@NAME"`), up to N links, each fact with its path, source, step and time
        (docs/language.md, "Links")."""
        chain = build.names(for_) if for_ is not None else []
        return self._analysis(ast.ExplainFollow(chain=chain, key=build.key(key), follow=hops))

    def _ask(self, question: ast.Node):
        return self.ask(question)

    def _analysis(self, analysis):
        return self.ask(ast.AskAnalysis(analysis=analysis)).result

    # ---------------------------------------------------------------- lifetime

    @_serialised
    def export(self) -> str:
        """The memory as one .tom file that `tomc run` replays to the same answers: its
        policy, agents, rooms and every event, in step order. Only for a memory
        (`Session.attach`), not as an agent."""
        if self.memory is None:
            raise ValueError("export is for memories (Session.attach); a file session's "
                             "scenario is its file")
        self._reader.whole("it cannot export every mind")
        engine = self._live.engine
        stored = catalog.read(engine.db, self.memory)
        if stored is None:
            raise LookupError(f"memory {self.memory!r} was dropped")
        return catalog.export(stored, engine.changes_since(0)[1])

    def close(self) -> None:
        """Release connections (stopping an embedded FalkorDB this session started). The
        graphs stay stored."""
        self._stack.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
