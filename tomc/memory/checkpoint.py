"""Attaching a memory from a checkpoint: what a session needs to resume, kept beside the
graphs, so that attaching costs the same at any history (issue 34 item 3).

- `tomem:{NAME}:events` (hash): every event, field its step, value the event whole
  (tomc/engine/event_codec.py JSON), written by the commit that applies it, in the same
  MULTI/EXEC (`record`); an undone event's field is deleted in the undo's
  (tomc/engine/recovery.py).
- `tomem:{NAME}:checkpoint` (string): the checker's state without its events, as of a
  revision (`Checkpoint`: the revision, the step, agents, rooms, who is where, the clock,
  the keys written), JSON, written with the commit that crosses each multiple of `EVERY`
  revisions (`crossing`), and by the first writer that attaches a memory without one
  (`backfill`); deleted by an undo.

Attaching reads the checkpoint, holds the events up to it as a `History` read when asked
(tomc/engine/history.py), and replays only the statements committed after it
(tomc/memory/opening.py `attached`). A memory without a checkpoint is replayed whole, as
before. The checkpoint is a cache of what the graphs' statements say: deleting it costs the
next attach a replay, never an answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional, Sequence

import redis
from pyrsistent import pset

from tomc.dsl.checker import CheckState
from tomc.dsl.program import AnyEvent
from tomc.engine import event_codec
from tomc.engine.history import History, StoredEvents
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable

EVERY = 256  # revisions between checkpoints: at most this many statements replayed
FORMAT = 1


def events_key(base: str) -> str:
    """`tomem:{NAME}:events` of the memory whose keys start with `base` (`tomem:{NAME}`)."""
    return f"{base}:events"


def checkpoint_key(base: str) -> str:
    return f"{base}:checkpoint"


@dataclass(frozen=True)
class Checkpoint:
    """The checker's state as of `revision`, without its `step` events."""

    revision: int
    step: int
    agents: tuple[str, ...]
    rooms: tuple[str, ...]
    where: dict
    clock: Optional[str]
    written: tuple[str, ...]

    def state(self, db: Database, base: str, procedures) -> CheckState:
        """The checker's state it holds, its events read from `base`'s event hash when
        asked; `procedures`: the policy's (a memory declares none of its own)."""
        events = History(StoredEvents(db, events_key(base), self.step))
        return CheckState(self.agents, self.rooms, MappingProxyType(dict(self.where)),
                          events, procedures, self.clock, pset(self.written))


def record(base: Optional[str], events: Sequence[AnyEvent]) -> list[tuple]:
    """The commands that keep `events` (just committed) in the memory's event hash; none
    for a file's scenario (`base` None)."""
    if base is None or not events:
        return []
    fields = []
    for event in events:
        fields += [str(event.step), event_codec.stored(event)]
    return [("HSET", events_key(base), *fields)]


def crossing(before: int, after: int) -> bool:
    """Whether commits from revision `before` to `after` cross a multiple of EVERY."""
    return before // EVERY != after // EVERY


def write(base: str, revision: int, state: CheckState) -> tuple:
    """The command that keeps `state` (the checker's, at `revision`) as the checkpoint."""
    found = {"format": FORMAT, "revision": revision, "step": len(state.events),
             "agents": list(state.agents), "rooms": list(state.rooms),
             "where": dict(state.where), "clock": state.clock,
             "written": sorted(state.written)}
    return ("SET", checkpoint_key(base), json.dumps(found))


def forget(base: Optional[str], steps: Sequence[int], kept_step: Optional[int]) -> list[tuple]:
    """The commands that take undone events `steps` out of the event hash, and the
    checkpoint away if it holds one of them (`kept_step`: the step it was taken at, read
    under the undo's WATCH; None: there is none)."""
    if base is None or not steps:
        return []
    commands = [("HDEL", events_key(base), *(str(s) for s in steps))]
    if kept_step is not None and kept_step >= min(steps):
        commands.append(("DEL", checkpoint_key(base)))
    return commands


def kept_step(pipe, base: Optional[str]) -> Optional[int]:
    """The step the memory's checkpoint was taken at (read on `pipe`, under its WATCH), or
    None when it has none (or none readable: it is then dropped with any undo)."""
    if base is None:
        return None
    text = pipe.get(checkpoint_key(base))
    if text is None:
        return None
    try:
        return int(json.loads(text)["step"])
    except (ValueError, KeyError, TypeError):
        return 0


def drop(db: Database, base: Optional[str]) -> None:
    """Delete the memory's checkpoint (a commit failed after writing one: its state may
    hold the failed change). The next attach replays the memory and keeps a new one."""
    if base is None:
        return
    try:
        db.redis.delete(checkpoint_key(base))
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not drop {checkpoint_key(base)}: {err}") from None


def complete(db: Database, base: str, revision_key: str, revision: int, step: int) -> bool:
    """Whether the event hash holds exactly the memory's `step` events, read with the
    revision in one transaction: False when it does not at `revision` (events written by
    a tomc that kept none, or a torn history), True also when a writer has committed
    since (the next attach looks again)."""
    try:
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.get(revision_key)
            pipe.hlen(events_key(base))
            now, count = pipe.execute()
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not read {events_key(base)}: {err}") from None
    return int(now or 0) != revision or count == step


def read(db: Database, base: str) -> Optional[Checkpoint]:
    """The memory's checkpoint, or None (none kept, or in a format this tomc does not
    read). Raises DatabaseUnavailable."""
    try:
        text = db.redis.get(checkpoint_key(base))
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not read {checkpoint_key(base)}: {err}") from None
    if text is None:
        return None
    try:
        found = json.loads(text)
        if found.get("format") != FORMAT:
            return None
        return Checkpoint(int(found["revision"]), int(found["step"]), tuple(found["agents"]),
                          tuple(found["rooms"]), dict(found["where"]), found["clock"],
                          tuple(found["written"]))
    except (ValueError, KeyError, TypeError):
        return None  # unreadable: replay instead


def backfill(db: Database, base: str, revision_key: str, revision: int,
             state: CheckState) -> bool:
    """Keep every event of `state` in the event hash, then `state` as the checkpoint at
    `revision` if the memory is still at `revision` (a memory stored before checkpoints,
    or whose checkpoint was dropped); False when a writer committed meanwhile (the next
    attach tries again, and this session writes none). The events go in pipelines of
    their own, not one transaction that would hold the server for the whole history: an
    event written again is the same event, and one undone meanwhile moved the revision;
    the checkpoint is written only if the hash then holds exactly these events."""
    events = list(state.events)
    try:
        for start in range(0, len(events), 1000):
            with db.redis.pipeline(transaction=False) as pipe:
                for command in record(base, events[start:start + 1000]):
                    pipe.execute_command(*command)
                pipe.execute()
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.watch(revision_key)
            if int(pipe.get(revision_key) or 0) != revision or \
                    pipe.hlen(events_key(base)) != len(events):
                return False
            pipe.multi()
            pipe.execute_command(*write(base, revision, state))
            pipe.execute()
    except redis.WatchError:
        return False
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not keep a checkpoint of {base}: {err}") from None
    return True
