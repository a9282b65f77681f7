"""Undoing an event that did not apply whole, and finding one when a memory is attached.

MULTI/EXEC runs every statement of an event, but a statement that fails at run time (a
FalkorDB limit, a bug) does not stop the others: FalkorDB rolls that one statement back and
the rest apply. The writer then undoes the event on every graph it could have touched
(undo.cypher: every write is stamped with its step, so undoing is exact), in a transaction
of its own. If the writer dies before it can, the next writer that attaches finds the event
half-applied (`check`): the world graph's Event lists the mind graphs it writes, and each of
those has its own Event node only if its statement applied. It undoes it then.
"""

from __future__ import annotations

from typing import Optional, Sequence

import redis

from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.engine.journal import Journal
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.executor import reply_rows


def undo_event(db: Database, graphs: GraphNames, step: int, revision: int,
               journal: Journal) -> bool:
    """Undo event `step` on the world graph and every mind graph, in one transaction that
    also moves the revision on (other writers see that something changed), if the
    scenario is still at `revision`; False (nothing done) if another writer committed
    since: whoever looks next finds the memory as it is then."""
    return undo_events(db, graphs, [step], revision, journal)


def undo_events(db: Database, graphs: GraphNames, steps: list[int], revision: int,
                journal: Journal, also: Sequence[tuple] = ()) -> bool:
    """`undo_event` of each of `steps` (a group committed together), latest first, in one
    transaction that also takes them out of what `journal` keeps (a memory's agents'
    views, its event hash: tomc/memory/journal.py) and runs the commands `also` (taking
    back what the failed transaction recorded)."""
    try:
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.watch(graphs.revision_key)
            if int(pipe.get(graphs.revision_key) or 0) != revision:
                return False
            existing = set(pipe.execute_command("GRAPH.LIST"))
            forgotten = journal.forgotten(pipe, graphs, steps)
            pipe.multi()
            for step in sorted(steps, reverse=True):
                pipe.execute_command(*query_command(graphs.world,
                                                    render("undo.cypher", world=True),
                                                    {"step": step}))
                for agent in graphs.agents:  # a write to a missing graph would create it
                    if graphs.mind(agent) in existing:
                        pipe.execute_command(*query_command(
                            graphs.mind(agent), render("undo.cypher", world=False),
                            {"step": step}))
            for command in [*forgotten, *also]:
                pipe.execute_command(*command)
            pipe.set(graphs.revision_key, revision + 1)
            replies = pipe.execute(raise_on_error=False)
    except redis.WatchError:
        return False
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not undo steps {steps}: {err}") from None
    failed = [r for r in replies if isinstance(r, Exception)]
    if failed:
        raise DatabaseUnavailable(f"could not undo steps {steps}: {failed[0]}")
    return True


def half_applied(db: Database, graphs: GraphNames) -> Optional[tuple[int, int]]:
    """(step, revision) of an event that applied to some of its graphs but not all, or
    None, from one snapshot of every graph and the revision (read in one MULTI/EXEC, so a
    writer committing meanwhile is seen whole or not at all).

    Only the latest event can be: writers commit one event at a time, each after the last
    one is whole. It is half-applied when a mind graph the world's Event lists lacks it, or
    when a mind graph holds the step after the world's (the world statement failed)."""
    commands = [("GET", graphs.revision_key),
                query_command(graphs.world, render("read_last_event.cypher"), {},
                              read_only=True),
                *(query_command(graphs.mind(agent), render("read_mind_steps.cypher"), {},
                                read_only=True) for agent in graphs.agents)]
    try:
        replies = db.reads(commands)
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not read {graphs.world}: {err}") from None
    if isinstance(replies[1], Exception):
        raise DatabaseUnavailable(f"could not read {graphs.world}: {replies[1]}")
    # A mind graph that does not exist (yet) holds no event: an error reply reads as empty.
    revision, world = int(replies[0] or 0), reply_rows(replies[1])
    minds = replies[2:]
    if not world:
        return None
    step, written = world[0]["step"], world[0]["minds"] or []
    latest = {agent: _latest(reply) for agent, reply in zip(graphs.agents, minds)}
    unknown = [agent for agent, steps in latest.items() if steps is None]
    if unknown:  # roots that do not know: count every Event of those graphs (rare)
        replies = db.reads([query_command(graphs.mind(agent),
                                          render("read_mind_steps_scan.cypher"), {},
                                          read_only=True) for agent in unknown])
        latest.update((agent, _latest(reply, scanned=True))
                      for agent, reply in zip(unknown, replies))
    for agent in graphs.agents:
        steps = set(latest[agent])
        if step + 1 in steps:
            return step + 1, revision
        if agent in written and step not in steps:
            return step, revision
    return None


def _latest(reply, scanned: bool = False) -> Optional[list[int]]:
    """The latest steps a mind graph's reply names (none for a graph that does not exist
    yet, an error reply); None when its root keeps fewer than two (read_mind_steps.cypher:
    then only a scan of its events can tell)."""
    if isinstance(reply, Exception):
        return []
    rows = reply_rows(reply)
    steps = (rows[0]["steps"] if rows else None) or []
    return steps if scanned or len(steps) >= 2 else None


def recover(db: Database, graphs: GraphNames, journal: Journal, tries: int = 100) -> None:
    """Undo the half-applied event a writer left, if any (a memory being attached)."""
    for _ in range(tries):
        found = half_applied(db, graphs)
        if found is None or undo_event(db, graphs, *found, journal):
            return
    raise DatabaseUnavailable(f"could not check {graphs.world}: other writers kept committing")
