"""A scenario held open: statements checked, then committed one at a time, by one of
possibly several writers.

The checker (tomc/dsl/checker.py `LiveChecker`) says whether a statement is valid after
everything before it; the engine (tomc/engine/base.py) makes it happen. Each statement is
its own commit (an event is one step; a declaration adds agents or rooms). On FalkorDB a
commit can lose a race: another writer committed first, the engine raises `Behind`, and
nothing was written. The live scenario then takes back what it had checked, catches up
(replays what the other writers committed, in order, through its checker), and checks and
commits its statements again; a write that said which step it follows (`after_step`)
raises StaleWrite instead.

The checker's states never change (`CheckState`): taking back what was checked is keeping
the state before it. The engine keeps a scenario model of its own and is told each change
(`declare`, `apply`, `apply_together`, `follow`): it never shares the checker's lists.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from tomc.dsl import ast
from tomc.dsl.checker import LiveChecker
from tomc.dsl.diagnostics import DiagnosticError
from tomc.dsl.formatter import format_statement
from tomc.dsl.program import AnyEvent, ScenarioModel
from tomc.engine.base import Behind, Engine
from tomc.runtime.errors import DatabaseUnavailable, StaleWrite
from tomc.runtime.transactions import TURN_AFTER

# Changes that are not events: agents and rooms, and the clock a memory sets before a
# claim (the time it was applied at: docs/storage.md, "Time"), kept and replayed as text.
DECLARATIONS = (ast.Agents, ast.Rooms, ast.Clock)
CHANGES = (*ast.EVENT_TYPES, *DECLARATIONS)
# What a session asks rather than applies.
QUESTIONS = (ast.Ask, ast.Expect, ast.AskAnalysis, ast.ExpectAnalysis, ast.AskReady,
             ast.ExpectReady)
# A writer that keeps losing races gives up after this many tries (each one a round trip
# behind a commit of another writer): contention, not an error of the input.
MAX_TRIES = 1000

# The commands that record a statement as committed at a step (0: a declaration), sent in
# its transaction (tomc/memory/writes.py).
Record = Callable[[int], Sequence[tuple]]


def _none(step: int) -> Sequence[tuple]:
    return ()


class _Parted(Exception):
    """A write that cannot share one transaction (`LiveScenario.apply_whole`)."""


class LiveScenario:
    """A checker and an engine kept in step over one scenario.

    `line_base` + a statement's revision is the `line` its event reports (in a memory, its
    number in the memory's log; after a file, the lines after the file's). The commits that
    its engine's journal says keep a checkpoint write one (a memory's: tomc/memory/journal.py).
    """

    def __init__(self, checker: LiveChecker, engine: Engine, line_base: int = 0):
        self.checker = checker
        self.engine = engine
        self.line_base = line_base

    @property
    def scenario(self) -> ScenarioModel:
        return self.checker.scenario

    @property
    def step(self) -> int:
        return len(self.checker.state.events)

    def apply(self, statements: Sequence, path: str = "<apply>",
              after_step: Optional[int] = None,
              records: Optional[Sequence[Record]] = None) -> list[AnyEvent]:
        """Check and commit `statements` (AST events and declarations) in order; returns the
        events. `records[i](step)`: commands committed in statement i's own transaction
        (its idempotency record; step 0 for a declaration). Raises DiagnosticError, StaleWrite (nothing of this call
        committed, unless another writer committed between two of its statements:
        docs/storage.md, "Limits"), DatabaseUnavailable; an error raised after some
        statements committed carries their events in `committed`."""
        committed: list[AnyEvent] = []
        try:
            self._apply(list(statements), path, after_step,
                        list(records) if records is not None else [_none] * len(statements),
                        committed)
        except (DiagnosticError, StaleWrite, DatabaseUnavailable) as err:
            err.committed = committed
            raise
        return committed

    def _apply(self, pending: list, path: str, after_step: Optional[int],
               records: list, committed: list[AnyEvent]) -> None:
        if after_step is not None and after_step != self.step:
            self.catch_up()  # this writer may be the one behind
            if after_step != self.step:
                raise StaleWrite(after_step, self.step)
        try:
            self._check(pending, path)  # every statement valid before any is committed
        except DiagnosticError:
            # Perhaps valid after what other writers committed (an agent they declared):
            # check again once caught up; bad input stays bad.
            self.catch_up()
            self._check(pending, path)
        tries = 0
        try:
            while pending:
                statement = pending[0]
                mark = self.checker.mark()
                try:
                    committed += self._commit(statement, path, records[0])
                except Behind:
                    self.checker.reset(mark)
                    tries += 1
                    if after_step is not None and not committed:
                        self.catch_up()
                        raise StaleWrite(after_step, self.step) from None
                    if tries >= MAX_TRIES:
                        raise DatabaseUnavailable(f"gave up after {tries} tries: other "
                                                  "writers kept committing first") from None
                    if tries >= TURN_AFTER:
                        self.engine.take_turn()  # fairness: tomc/runtime/transactions.py
                    self.catch_up()
                    self._check(pending, path)
                    continue
                except DatabaseUnavailable:
                    self.checker.reset(mark)
                    raise
                pending.pop(0)
                records.pop(0)
                tries = 0  # a commit ends the turn it used
        finally:
            if tries >= TURN_AFTER:
                self.engine.end_turn()  # refused or failed while holding it

    def apply_whole(self, statements: Sequence, path: str = "<apply>",
                    after_step: Optional[int] = None,
                    records: Optional[Sequence[Record]] = None) -> list[AnyEvent]:
        """`apply` for a memory's write (a FalkorEngine): when every statement can share
        one transaction (events that read nothing before they are compiled, and clock
        lines: `groupable`), they commit in ONE, with their records, so a reader sees the
        write whole or not at all; else statement by statement (`apply`: an `agents` or
        `rooms` line, whose perspectives later statements link to, or an event that reads
        the graphs first; docs/storage.md, "Limits"). Raises as `apply`; a failed whole
        write committed nothing (`committed` is empty)."""
        statements = list(statements)
        records = list(records) if records is not None else [_none] * len(statements)
        if any(isinstance(s, DECLARATIONS) and not isinstance(s, ast.Clock)
               for s in statements):
            return self.apply(statements, path, after_step, records)
        try:
            return self._whole(statements, path, after_step, records)
        except (DiagnosticError, StaleWrite, DatabaseUnavailable) as err:
            err.committed = []
            raise
        except _Parted:
            return self.apply(statements, path, after_step, records)

    def _whole(self, statements: list, path: str, after_step: Optional[int],
               records: list) -> list[AnyEvent]:
        if after_step is not None and after_step != self.step:
            self.catch_up()
            if after_step != self.step:
                raise StaleWrite(after_step, self.step)
        lost, caught_up = 0, False  # races lost in a row (the turn: runtime/transactions.py)
        try:
            while True:
                mark = self.checker.mark()
                try:
                    events, _ = self.checker.add(statements, CHANGES, path=path,
                                                 canonical=True)
                except DiagnosticError:
                    self.checker.reset(mark)
                    if caught_up:
                        raise
                    caught_up = True
                    self.catch_up()  # perhaps valid after what other writers committed
                    continue
                if not all(self.engine.groupable(e, self.scenario.policy) for e in events):
                    self.checker.reset(mark)
                    raise _Parted()
                step = self.step - len(events)
                extra = []
                for statement, record in zip(statements, records):
                    if not isinstance(statement, DECLARATIONS):
                        step += 1
                    extra += record(0 if isinstance(statement, DECLARATIONS) else step)
                try:
                    self.apply_together(statements, extra)
                except Behind:
                    self.checker.reset(mark)
                    lost += 1
                    self.catch_up()
                    if after_step is not None:
                        raise StaleWrite(after_step, self.step) from None
                    if lost >= MAX_TRIES:
                        raise DatabaseUnavailable(f"gave up after {lost} tries: other "
                                                  "writers kept committing first") from None
                    if lost >= TURN_AFTER:
                        self.engine.take_turn()  # fairness, as `apply`
                    continue
                except DatabaseUnavailable:
                    self.checker.reset(mark)  # undone (or left for the next attach to undo)
                    self.catch_up()
                    raise
                lost = 0  # the commit ended the turn it used
                held = self.checker.state.events
                return list(held[len(held) - len(events):])
        finally:
            if lost >= TURN_AFTER:
                self.engine.end_turn()  # refused or failed while holding it

    def apply_together(self, statements: Sequence, extra: Sequence[tuple] = ()) -> None:
        """Commit statements the checker has just taken (the scenario's newest events, each
        `groupable`, and clock lines) in one transaction with `extra`, one revision each
        (tomc/memory/applier.py). Raises Behind, DatabaseUnavailable: the caller resets the
        checker and catches up."""
        count = sum(not isinstance(s, DECLARATIONS) for s in statements)
        total = len(self.checker.state.events)
        events = iter(range(total - count, total))
        changes, revision = [], self.engine.revision
        for statement in statements:
            revision += 1
            if isinstance(statement, DECLARATIONS):
                changes.append(format_statement(statement))
                continue
            changes.append(self.checker.number(next(events), self.line_base + revision))
        self.engine.apply_together(changes, [*extra, *self._checkpoint(len(changes))])

    def _checkpoint(self, count: int) -> list[tuple]:
        """The checkpoint to write with the commit of the checker's last `count` changes, if
        the engine's journal keeps one there (a memory's: tomc/memory/journal.py)."""
        before = self.engine.revision
        kept = self.engine.journal.checkpoint(before, before + count, self.checker.state)
        return [] if kept is None else [kept]

    def _check(self, statements: list, path: str) -> None:
        """Check `statements` after the state so far, keeping nothing of them."""
        mark = self.checker.mark()
        try:
            self.checker.add(statements, CHANGES, path=path, canonical=True)
        finally:
            self.checker.reset(mark)

    def _commit(self, statement, path: str, record: Record) -> list[AnyEvent]:
        before = self.checker.state
        self.checker.add([statement], CHANGES, path=path, canonical=True)
        after = self.checker.state
        if isinstance(statement, DECLARATIONS):
            self.engine.declare(list(after.agents[len(before.agents):]),
                                list(after.rooms[len(before.rooms):]),
                                format_statement(statement),
                                extra=[*record(0), *self._checkpoint(1)])
            return []
        numbered = self.checker.number(len(after.events) - 1,
                                       self.line_base + self.engine.revision + 1)
        self.engine.apply([numbered], [*record(numbered.step), *self._checkpoint(1)])
        return [numbered]

    def catch_up(self) -> None:
        """Replay what other writers committed since this scenario's revision, then take
        the engine's state from the graphs."""
        reached, changes = self.engine.changes_since(self.engine.revision)
        # Checked whole before the engine is told: a change that fails to check leaves
        # both where they were (the checker back at its mark), never one ahead.
        mark, told = self.checker.mark(), []
        try:
            for revision, text in changes:
                before = self.checker.state
                self.checker.add_text(text, CHANGES, path="<memory>")
                after = self.checker.state
                events = [self.checker.number(i, self.line_base + revision)
                          for i in range(len(before.events), len(after.events))]
                told.append((list(after.agents[len(before.agents):]),
                             list(after.rooms[len(before.rooms):]), events))
        except BaseException:
            self.checker.reset(mark)
            raise
        for agents, rooms, events in told:
            self.engine.follow(agents, rooms, events)
        self.engine.reload(reached)
