"""Forks of a scenario's graphs for simulations: GRAPH.COPY, run, always drop.

`plan_announcements` tries each plan on copies, never on the scenario's own graphs. Only the
graphs a simulation can write are copied (the world graph, and the mind graphs of the
speakers and listeners of its events): GRAPH.COPY costs about 100 ms per graph whatever its
size (docs/falkordb.md check 4.3). The forks are deleted when the block ends, error or not; forks
left by a killed process are named after their host and process, so the next run on that
host drops them (`drop_abandoned`), and another host's are left alone.

A memory's forks are keys of the memory (`tomem:{NAME}:fork:TOKEN:...`, through
`memory_key`): they share its hash tag, so in a cluster GRAPH.COPY stays on the memory's
shard (a copy across slots fails with CROSSSLOT). A scenario's forks are `tomfork:TOKEN:...`.
"""

from __future__ import annotations

import os
import time
import uuid
from contextlib import contextmanager
from typing import Iterable, Iterator

import redis

from tomc.compiler.plan import GraphNames, graph_key
from tomc.runtime.connection import Database
from tomc.runtime.executor import HOST, Directory
from tomc.runtime.keys import memory_key, memory_name
from tomc.runtime.server import process_alive

FORK_PREFIX = "tomfork"
# GRAPH.COPY forks the server, which refuses while another child runs (an AOF rewrite, a
# BGSAVE: "could not fork"); those end in seconds, so a copy waits up to this long.
COPY_WAIT_S = 30.0


def replays(db: Database) -> bool:
    """Whether simulations on `db` (a memory's shard, or one server) must not fork with
    GRAPH.COPY: its URL asks so (`simulate=replay`), or, by default, its master has
    replicas: on FalkorDB 4.22.1 and 4.16.3 alike, a node whose AOF holds a GRAPH.COPY and
    a write to the copy was seen to shut down when it restarted, and a 4.16 master to hang
    on a GRAPH.COPY right after a replica's full sync (docs/falkordb.md check 10.2,
    docs/deployment.md "Known limits"). Then a simulation replays the scenario instead
    (tomc/engine/falkordb.py `simulate`)."""
    if db.options.simulate != "auto":
        return db.options.simulate == "replay"
    return int(db.redis.info("replication").get("connected_slaves", 0)) > 0


def written_minds(events: Iterable, agents: list[str]) -> set[str]:
    """The agents whose mind graphs `events` (tells and announcements) can write: a rule of
    the policy names chains that start with the speaker or a listener."""
    minds: set[str] = set()
    for event in events:
        minds.add(event.speaker)
        minds.update(event.listeners)
    return minds & set(agents)


@contextmanager
def fork(db: Database, graphs: GraphNames, agents: set[str],
         directory: Directory) -> Iterator[GraphNames]:
    """Copies of `graphs`' world graph and of the mind graphs of `agents`; the other minds
    stay the originals (read, never written). Yields the forked names (the directory knows
    their perspectives: a copy keeps its node ids); deletes the copies when the block ends,
    however it ends."""
    token = f"{HOST}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    memory = memory_name(graphs.world)
    if memory is not None:
        forked = GraphNames(memory_key(memory, "fork", token, "world"), {
            a: (memory_key(memory, "fork", token, "mind", a) if a in agents else name)
            for a, name in graphs.minds.items()})
    else:
        forked = GraphNames(f"{FORK_PREFIX}:{token}:world", {
            a: (f"{FORK_PREFIX}:{token}:mind:{graph_key(a)}" if a in agents else name)
            for a, name in graphs.minds.items()})
    pairs = [(graphs.world, forked.world)] + [(graphs.mind(a), forked.mind(a))
                                             for a in graphs.agents if a in agents]
    copied: list[str] = []
    try:
        for source, target in pairs:
            _copy(db, source, target)
            copied.append(target)
            if source in directory.ids:
                directory.ids[target] = directory.ids[source]
        yield forked
    finally:
        for target in copied:
            directory.ids.pop(target, None)
        if copied:
            db.redis.delete(*copied)


def _copy(db: Database, source: str, target: str) -> None:
    """GRAPH.COPY once the server has no child of its own (an AOF rewrite, a BGSAVE) running,
    retried while it still says it cannot fork; other errors are raised. FalkorDB 4.22
    refuses a copy while a child runs ("could not fork"); 4.16 never answered it (the test
    timed out), so the copy waits for the child to end before asking."""
    deadline = time.monotonic() + COPY_WAIT_S
    while True:
        if _child_running(db) and time.monotonic() < deadline:
            time.sleep(0.05)
            continue
        try:
            db.redis.execute_command("GRAPH.COPY", source, target)
            return
        except redis.ResponseError as err:
            if "could not fork" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _child_running(db: Database) -> bool:
    """Whether the server is running a child process (AOF rewrite, RDB save, a module's fork)."""
    info = db.redis.info("persistence")
    return any(info.get(field) for field in ("aof_rewrite_in_progress", "rdb_bgsave_in_progress",
                                             "module_fork_in_progress"))


def drop_abandoned(db: Database) -> None:
    """Delete forks left by a process of this host that no longer runs (killed mid-
    simulation); forks of other hosts sharing the server are theirs to clean."""
    gone = []
    for name in db.graph_names():
        parts = name.split(":")
        if parts[0] == FORK_PREFIX or (len(parts) > 3 and memory_name(":".join(
                [*parts[:2], "world"])) is not None and parts[2] == "fork"):
            owner = (parts[1] if parts[0] == FORK_PREFIX else parts[3]).split("-")
            if len(owner) < 3 or (owner[0] == HOST and owner[1].isdigit()
                                  and not process_alive(int(owner[1]))):
                gone.append(name)
    for name in gone:  # one by one: in a cluster node, forks of other memories are other slots
        db.redis.delete(name)
