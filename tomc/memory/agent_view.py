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
                                 json.dumps(event_codec.dump(seen))))
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
    """The commands that take undone events `steps` out of every agent's view."""
    if base(graphs) is None or not steps:
        return []
    fields = [str(s) for s in steps]
    return [*(("HDEL", seen_key(graphs, a), *fields) for a in graphs.agents),
            ("HSET", public_key(graphs), "step", str(min(steps) - 1))]


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


def revision(db: Database, graphs: GraphNames) -> int:
    """The memory's revision (its key, which an agent's user may GET)."""
    return int(db.redis.get(graphs.revision_key) or 0)


def read(db: Database, graphs: GraphNames, agent: str, tries: int = 100) -> Optional[View]:
    """`agent`'s view through `db` (its own user may read nothing else): the revision, both
    hashes, and the revision again, until it did not move meanwhile (a commit between the
    reads). None when the memory has no view (no memory, or one made before the view that
    no administrator has filled in yet)."""
    for _ in range(tries):
        try:
            before = revision(db, graphs)
            public = db.redis.hgetall(public_key(graphs))
            seen = db.redis.hgetall(seen_key(graphs, agent))
            after = revision(db, graphs)
        except redis.exceptions.NoPermissionError:
            raise
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not read {agent}'s view: {err}") from None
        if before != after:
            continue
        if "header" not in public:
            return None
        declarations = [public[k] for k in sorted((k for k in public if k.isdigit()), key=int)]
        events = [event_codec.load(json.loads(seen[k])) for k in sorted(seen, key=int)]
        return View(public["header"], declarations, int(public.get("step", 0)), events,
                    after)
    raise DatabaseUnavailable(f"could not read {agent}'s view: writers kept committing")


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
