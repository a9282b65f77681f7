"""One write to a memory, as both writing paths take it: the embedded one (a `Session`
committing itself) and the applier's (tomc/memory/applier.py).

A write is a list of statements and an idempotency key (docs/storage.md, "Retries"), which
belongs to its writer (`ADMIN`, or the agent whose own credential sent it): statement `i` of
the write WRITER called `KEY` commits with the record `[WRITER, KEY, i]` -> its step (0 for
a declaration), and `[WRITER, KEY]` -> the digest of the write's statements, in its own
transaction. So a write retried with the same key applies only the statements no record
says committed, and returns the original steps of the others; the same key with other
statements is refused (E146), never answered with another write's steps. A claim with no
`at` takes the time it is applied at (`pending`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Sequence

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic
from tomc.dsl.formatter import format_statement
from tomc.dsl.program import AnyEvent
from tomc.engine.live import LiveScenario, Record
from tomc.memory import checkpoint
from tomc.runtime.connection import Database
from tomc.runtime.errors import TomError
from tomc.runtime.keys import digest_field, idempotency_field, memory_key

# The writer of a write sent with the administrator's credential (an agent's own credential
# writes as that agent: docs/security.md).
ADMIN = ""


@dataclass
class Pending:
    """What is left of a write: `statements` (stamped), `records[i]` the commands that
    record statement i (none for a clock line the stamping added), and `done`: (index,
    step) of the statements a record says committed already."""

    statements: list
    records: list[tuple]
    done: list[tuple[int, int]]


def now() -> str:
    """The time now, canonical (UTC, to the second): when a claim is applied to a memory."""
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


def digest(parsed: Sequence) -> str:
    """The digest of a write's statements (canonical .tom text, before any stamping)."""
    text = "\n".join(format_statement(statement) for statement in parsed)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record(name: str, writer: str, key: str, index: int, step: int) -> tuple:
    """The command that records statement `index` of `writer`'s write `key` as committed
    at `step`."""
    return ("HSET", memory_key(name, "keys"), idempotency_field(writer, key, index), step)


def claim(name: str, writer: str, key: str, parsed: Sequence, first: bool = True) -> tuple:
    """The command that ties `writer`'s key `key` to the statements `parsed`, sent with
    the records of each of them. `first`: no statement of the write committed before, so
    the tie is this transaction's (HSET: a failed transaction's HSETs are taken back with
    it, tomc/engine/falkordb.py); else HSETNX, which keeps the tie a failure must not undo."""
    return ("HSET" if first else "HSETNX", memory_key(name, "keys"), digest_field(writer, key),
            digest(parsed))


def recorded(db: Database, name: str, writer: str, key: str,
             parsed: Sequence) -> list[Optional[int]]:
    """The step each statement of `writer`'s write `key` (`parsed`) committed at (0: a
    declaration), None for one not committed. Raises TomError E146 when the key was used
    for other statements: a retry must send the same write."""
    values = db.redis.hmget(memory_key(name, "keys"), [
        digest_field(writer, key), *(idempotency_field(writer, key, i)
                                     for i in range(len(parsed)))])
    if values[0] is not None and values[0] != digest(parsed):
        raise TomError([Diagnostic(
            "E146", f"the idempotency key {key!r} was used for another write", None,
            "<apply>", hint="a retry sends the same statements with the same key; use a new "
            "key for a new write")])
    steps = [None if v is None else int(v) for v in values[1:]]
    return _still_there(db, name, parsed, steps)


def _still_there(db: Database, name: str, parsed: Sequence,
                 steps: list[Optional[int]]) -> list[Optional[int]]:
    """`steps` less the records whose event is not in the memory's event hash as that
    statement: a writer killed before it could undo a failed event leaves its records, and
    the undo that recovery does at the next attach (tomc/engine/recovery.py) cannot know
    them; the step may hold another event since."""
    events = [(i, s) for i, s in enumerate(steps) if s]
    if not events:
        return steps
    stored = db.redis.hmget(checkpoint.events_key(memory_key(name)),
                            [str(s) for _, s in events])
    for (i, _), text in zip(events, stored):
        if text is None or _words(json.loads(text).get("text")) != _words(
                format_statement(parsed[i])):
            steps[i] = None
    return steps


def _words(text: Optional[str]) -> str:
    return " ".join((text or "").split())


def pending(parsed: list, done: Sequence[Optional[int]], clock: Optional[str],
            at: str) -> Pending:
    """The statements of a write still to commit, each with its record, and `clock AT`
    before the first claim (or ending) that nothing before it in the write gave a time: a
    claim's `at` is when its source published it, so without this its event would take the
    time of the memory's previous timed event, and "what did we know on D" would count it
    too early (docs/storage.md, "Time"). Not when the clock is already at or after `at`."""
    out = Pending([], [], [(i, s) for i, s in enumerate(done) if s is not None])
    timed = False
    for index, statement in enumerate(parsed):
        if done[index] is not None:
            continue
        if isinstance(statement, (ast.Claim, ast.EndedClaim)) and not timed:
            if clock is None or at > clock:
                out.statements.append(ast.Clock(time=at))
                out.records.append(())
            timed = True
        timed = timed or (isinstance(statement, ast.Timed) and statement.at is not None)
        out.statements.append(statement)
        out.records.append((index,))
    return out


def with_records(left: Pending, name: str, writer: str, key: str,
                 parsed: Sequence) -> list[Record]:
    """`left.records` as LiveScenario.apply takes them: step -> the commands recording
    the statement and the write's digest (none for a clock line the stamping added). The
    digest is the first recorded statement's own (`claim`) when nothing of the write
    committed before; every later one only keeps it."""
    first = next((i for i, indexes in enumerate(left.records) if indexes), None)
    ties = [claim(name, writer, key, parsed, first=i == first and not left.done)
            for i in range(len(left.records))]
    return [(lambda step, indexes=indexes, tie=tie: [
                *(record(name, writer, key, i, step) for i in indexes),
                *([tie] if indexes else [])])
            for indexes, tie in zip(left.records, ties)]


def write(live: LiveScenario, name: str, parsed: list, writer: str, key: str,
          after_step: Optional[int], done: Sequence[Optional[int]],
          path: str = "<apply>") -> list[AnyEvent]:
    """Commit what is left of a write (`done`: `recorded` for it) through `live`, in
    one transaction with its records when it can share one (`LiveScenario.apply_whole`),
    else each statement in its own; returns every event of the write
    (the ones committed before with their original steps). `after_step` is checked only
    when nothing of the write committed before. Raises as LiveScenario.apply."""
    left = pending(parsed, done, live.checker.clock, now())
    if left.done:
        live.catch_up()
        after_step = None
    records = with_records(left, name, writer, key, parsed)
    events = live.apply_whole(left.statements, path, after_step, records) \
        if left.statements else []
    return merged(live, left, events)


def merged(live: LiveScenario, left: Pending, events: list[AnyEvent]) -> list[AnyEvent]:
    """The events of a write in statement order: those committed before (from the
    scenario, by step) and `events` just committed."""
    earlier = [live.scenario.events[step - 1] for _, step in left.done if step > 0]
    return sorted(earlier + list(events), key=lambda e: e.step)
