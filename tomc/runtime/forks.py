"""Forks of a scenario's graphs for simulations: GRAPH.COPY, run, always drop.

`plan_announcements` tries each plan on copies, never on the scenario's own graphs. Only the
graphs a simulation can write are copied (the world graph, and the mind graphs of the
speakers and listeners of its events): GRAPH.COPY costs about 100 ms per graph whatever its
size (FALKORDB.md check 4.3). The forks are deleted when the block ends, error or not.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Iterator, Sequence

from tomc.compiler.plan import GraphNames, graph_key
from tomc.program import EventModel
from tomc.runtime.connection import Database

FORK_PREFIX = "tomfork"


def written_minds(events: Sequence[EventModel], agents: list[str]) -> set[str]:
    """The agents whose mind graphs `events` (tells and announcements) can write: a rule of
    the policy names chains that start with the speaker or a listener, and an event with no
    named listeners reaches everyone."""
    minds: set[str] = set()
    for event in events:
        minds.add(event.speaker)
        minds.update(event.listeners if event.listeners is not None else agents)
    return minds


@contextmanager
def fork(db: Database, graphs: GraphNames, agents: set[str]) -> Iterator[GraphNames]:
    """Copies of `graphs`' world graph and of the mind graphs of `agents`; the other minds
    stay the originals (read, never written). Yields the forked names; deletes the copies
    when the block ends, however it ends."""
    token = uuid.uuid4().hex[:12]
    forked = GraphNames(f"{FORK_PREFIX}:{token}:world", {
        a: (f"{FORK_PREFIX}:{token}:mind:{graph_key(a)}" if a in agents else name)
        for a, name in graphs.minds.items()})
    pairs = [(graphs.world, forked.world)] + [(graphs.mind(a), forked.mind(a))
                                             for a in graphs.agents if a in agents]
    copied: list[str] = []
    try:
        for source, target in pairs:
            db.redis.execute_command("GRAPH.COPY", source, target)
            copied.append(target)
        yield forked
    finally:
        if copied:
            db.redis.delete(*copied)
