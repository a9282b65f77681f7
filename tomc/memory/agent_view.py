"""What an agent holding only its own credential reads of a memory's world (docs/security.md,
"An agent can hold only its own credential"): plain hashes kept by every commit, in the
same MULTI/EXEC as the change they record, so a reader never sees one torn from its graphs.

- `tomem:{NAME}:public`: `header` (the memory's policy and scenario line, .tom text),
  `step` (the memory's step) and, under its revision, every declaration (`agents`,
  `rooms` and clock lines, canonical .tom text): what every agent of the memory may read.
- `tomem:{NAME}:seen:AGENT`: the events AGENT perceived, field the step, value the event
  as AGENT perceived it (`perceived`; tomc/engine/event_codec.py JSON: kind, text, line,
  witnesses, fact, ...): only AGENT's user may read it (tomc/memory/acl.py).

A commit adds one HSET per witness and one to `public` (microseconds beside its graph
statements); an undone event's fields are deleted in the undo's transaction
(tomc/engine/recovery.py). A memory made before the view is filled in by `backfill`
(an administrator's connection: `tomc token credential`, an attach as an agent).

    commands = record(graphs, [event, "agents Eve"], revision)   # HSETs for a commit
    view = read(agent_db, graphs, "Maya")                       # View(header, ...)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Optional, Sequence

import redis

from tomc.compiler.plan import GraphNames
from tomc.dsl.program import AnyEvent
from tomc.engine import event_codec
from tomc.names import graph_key
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable


def base(graphs: GraphNames) -> Optional[str]:
    """`tomem:{NAME}` of a memory's graphs; None for a scenario run from a file (no view)."""
    if not graphs.world.startswith("tomem:{") or not graphs.world.endswith(":world"):
        return None
    return graphs.world[:-len(":world")]


def public_key(graphs: GraphNames) -> str:
    """`tomem:{NAME}:public` (`memory_key(NAME, 'public')`)."""
    return f"{base(graphs)}:public"


def seen_key(graphs: GraphNames, agent: str) -> str:
    """`tomem:{NAME}:seen:AGENT` (`memory_key(NAME, 'seen', AGENT)`: the agent's name
    through `graph_key`, as its mind graph's)."""
    return f"{base(graphs)}:seen:{graph_key(agent)}"


def record(graphs: GraphNames, changes: Sequence, revision: int) -> list[tuple]:
    """The commands that record `changes` (events, or declarations as .tom text), committed
    as revision + 1, + 2, ...: each declaration in `public` under its revision, each event
    in its witnesses' `seen` under its step, and the step reached. [] (no command) for a
    file's scenario."""
    if base(graphs) is None:
        return []
    commands, step = [], None
    for n, change in enumerate(changes, 1):
        if isinstance(change, str):
            commands.append(("HSET", public_key(graphs), str(revision + n), change))
            continue
        for agent in change.witnesses:
            seen = perceived(change, agent)
            if seen is not None:
                commands.append(("HSET", seen_key(graphs, agent), str(change.step),
                                 event_codec.stored(seen)))
        step = change.step
    if step is not None:
        commands.append(("HSET", public_key(graphs), "step", str(step)))
    return commands


def perceived(event: AnyEvent, agent: str) -> Optional[AnyEvent]:
    """`event` as `agent` perceived it (docs/semantics.md section 3, "Peeking and
    distraction"), what its view and its session's history hold: None when it did not (not
    a witness, or distracted: it missed the event, text and all); else the event without
    what `agent` cannot know: a peeker is unseen, so the others' copies leave the peekers
    out (a peeker's keeps itself, not other peekers), and nobody knows who was distracted
    (the others think they saw it). A memory refuses peeks and distractions today (E144):
    this keeps its views right the day it takes them."""
    distracted = getattr(event, "distracted", ())
    if agent not in event.witnesses or agent in distracted:
        return None
    peekers = getattr(event, "peekers", ())
    unseen = {p for p in peekers if p != agent}
    if not unseen and not distracted:
        return event
    return replace(event, witnesses=tuple(w for w in event.witnesses if w not in unseen),
                   peekers=tuple(p for p in peekers if p == agent), distracted=())


def forget(graphs: GraphNames, steps: Sequence[int]) -> list[tuple]:
    """The commands that take undone events `steps` out of every agent's view, and count
    the undo (`undone`: a reader that held them reads its view whole again, even once
    new events took their steps)."""
    if base(graphs) is None or not steps:
        return []
    fields = [str(s) for s in steps]
    return [*(("HDEL", seen_key(graphs, a), *fields) for a in graphs.agents),
            ("HSET", public_key(graphs), "step", str(min(steps) - 1)),
            ("HINCRBY", public_key(graphs), "undone", 1)]


def header(graphs: GraphNames, text: str) -> list[tuple]:
    """The command that records a new memory's header."""
    return [("HSET", public_key(graphs), "header", text)]


@dataclass(frozen=True)
class View:
    """One agent's view as read: the memory's `header`, its declarations (.tom text in
    revision order), the `step` reached, the events the agent witnessed (step order) and
    the `revision` they are at."""

    header: str
    declarations: list[str]
    step: int
    events: list[AnyEvent]
    revision: int
    undone: int = 0  # how many undos the view had seen (`forget`)


def revision(db: Database, graphs: GraphNames) -> int:
    """The memory's revision (its key, which an agent's user may GET)."""
    return int(db.redis.get(graphs.revision_key) or 0)


# How many fields one command of a view's reader names or returns (HSCAN's COUNT, HMGET's
# fields): what an agent's user may read of its view costs the server little per command,
# however long the memory's history.
PAGE = 500


def read(db: Database, graphs: GraphNames, agent: str, tries: int = 100) -> Optional[View]:
    """`agent`'s view through `db` (its own user may read nothing else), read a page at a
    time: the revision and the step it reached (read again until they did not move
    between: a commit between the reads), then both hashes (HSCAN), keeping what is at or
    before them (fields only ever come after: an undo, which takes some back, is seen as
    the step moving back). None when the memory has no view (no memory, or one made before
    the view that no administrator has filled in yet)."""
    for _ in range(tries):
        try:
            at, header_text, step, undone = _reached(db, graphs, tries)
            if header_text is None:
                return None
            public = dict(db.redis.hscan_iter(public_key(graphs), count=PAGE))
            seen = dict(db.redis.hscan_iter(seen_key(graphs, agent), count=PAGE))
            _, _, step_after, undone_after = _reached(db, graphs, tries)
        except redis.exceptions.NoPermissionError:
            raise
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not read {agent}'s view: {err}") from None
        if undone_after != undone:  # an event undone meanwhile
            continue
        revisions = sorted(int(k) for k in public if k.isdigit() and int(k) <= at)
        steps = sorted(int(k) for k in seen if k.isdigit() and int(k) <= step)
        return View(header_text, [public[str(r)] for r in revisions], step,
                    [event_codec.load(json.loads(seen[str(n)])) for n in steps], at, undone)
    raise DatabaseUnavailable(f"could not read {agent}'s view: writers kept committing")


def since(db: Database, graphs: GraphNames, agent: str, view: View) -> Optional[View]:
    """What `agent`'s view gained after `view` (its declarations and events since, with the
    revision and step reached now), read field by field (HMGET, a page at a time): None
    when nothing moved. Raises Reread when `view` cannot be caught up (an event of it was
    undone, or the memory is another one now): read it whole again."""
    try:
        at, header_text, step, undone = _reached(db, graphs)
        if at == view.revision:
            return None
        if header_text != view.header or undone != view.undone or step < view.step:
            raise Reread()
        revisions = [str(r) for r in range(view.revision + 1, at + 1)]
        steps = [str(n) for n in range(view.step + 1, step + 1)]
        declarations = [d for d in _fields(db, public_key(graphs), revisions) if d is not None]
        events = [event_codec.load(json.loads(e))
                  for e in _fields(db, seen_key(graphs, agent), steps) if e is not None]
    except redis.exceptions.NoPermissionError:
        raise
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not read {agent}'s view: {err}") from None
    return View(header_text, declarations, step, events, at, undone)


class Reread(Exception):
    """A view cannot be caught up from where it was: read it whole (`read`)."""


def _reached(db: Database, graphs: GraphNames,
             tries: int = 100) -> tuple[int, Optional[str], int, int]:
    """(revision, header, step, undos) of the memory's view, as of one revision (read until
    the revision did not move between)."""
    for _ in range(tries):
        before = revision(db, graphs)
        header_text, step, undone = db.redis.hmget(public_key(graphs),
                                                   ["header", "step", "undone"])
        if revision(db, graphs) == before:
            return before, header_text, int(step or 0), int(undone or 0)
    raise DatabaseUnavailable("could not read the view: writers kept committing")


def _fields(db: Database, key: str, fields: list[str]) -> list[Optional[str]]:
    """HMGET of `fields` of hash `key`, a page at a time."""
    found: list[Optional[str]] = []
    for start in range(0, len(fields), PAGE):
        found += db.redis.hmget(key, fields[start:start + PAGE])
    return found


def present(db: Database, graphs: GraphNames) -> bool:
    """Whether the memory has its view (a memory made before it has none until
    `backfill`)."""
    return bool(db.redis.hexists(public_key(graphs), "header"))


def backfill(db: Database, graphs: GraphNames, header_text: str,
             changes: Sequence[tuple[int, object]], revision_at: int) -> bool:
    """Fill in the view of a memory made before it (no `header` in `public`) from its
    applied changes, (revision, the event whole or a declaration as text), as of
    `revision_at`, under WATCH of the revision: False (nothing written) if a writer
    committed meanwhile, True if written or already there."""
    try:
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.watch(graphs.revision_key)
            if pipe.hexists(public_key(graphs), "header"):
                return True
            if int(pipe.get(graphs.revision_key) or 0) != revision_at:
                return False
            pipe.multi()
            commands = header(graphs, header_text)
            for rev, change in changes:
                commands += record(graphs, [change], rev - 1)
            for command in commands:
                pipe.execute_command(*command)
            pipe.execute()
    except redis.WatchError:
        return False
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not fill in the agents' views: {err}") from None
    return True
