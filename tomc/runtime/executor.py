"""Executing statements on FalkorDB: a scenario's world graph and one mind graph per agent.

Statements name perspectives by chain; the `Directory` links each to its node id in its mind
graph (learnt from the setup statements and `read_perspectives.cypher`), so a write finds a
perspective by id instead of scanning for its chain. Statements that do not depend on one
another's results are pipelined: one round trip for many statements.

A run (tomc/engine/falkordb.py) builds a scenario's graphs under staging names
(`<name>~building~<host>-<pid>-<random>`) and swaps them in at the end, in one MULTI/EXEC:
a failed or killed run leaves what was stored before untouched. A live memory commits each
event in a transaction of its own (tomc/runtime/transactions.py).
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import redis

from tomc.compiler.plan import GraphNames, Statement
from tomc.compiler.templates import render
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import process_alive

Chain = tuple[str, ...]

# A run builds under `<name>~building~<host>-<pid>-<random>`: names never hold `~`
# (graph_key), and runs of one scenario on a shared server, from any host, build apart.
STAGING_MARK = "~building~"
HOST = socket.gethostname().replace("-", "_").replace("~", "_")


class Directory:
    """Perspective node ids by mind graph and chain (`{graph: {chain: id}}`)."""

    def __init__(self):
        self.ids: dict[str, dict[Chain, int]] = {}

    def learn(self, graph: str, rows: Iterable[dict]) -> None:
        """Record rows {id, agents} read from `graph`."""
        self.ids.setdefault(graph, {}).update({tuple(r["agents"]): r["id"] for r in rows})

    def rename(self, old: str, new: str) -> None:
        """The graph `old` is now called `new` (a staged run swapped in)."""
        if old in self.ids:
            self.ids[new] = self.ids.pop(old)

    def link(self, graph: str, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with the chains (`p`, `source`) of the rows of write.cypher replaced by
        node ids."""
        ids = self.ids[graph]
        out = dict(params)
        for name, fields in LINKED.items():
            if params.get(name):
                out[name] = [{**row, **{k: ids[tuple(row[k])] for k in fields}}
                             for row in params[name]]
        return out


# The parameters of write.cypher whose rows name perspectives by chain
# (tomc/compiler/resolve.py Changes).
LINKED = {"copies": ("p", "source"), "creates": ("p",), "supports": ("p",),
          "contests": ("p",), "keeps": ("p",), "closes": ("p",), "supersedes": ("p",)}


@dataclass
class RunStats:
    """Timing of a run: seconds per event (its statements, sent together), round trips."""

    event_seconds: list[float] = field(default_factory=list)
    statements: int = 0
    round_trips: int = 0
    total_seconds: float = 0.0


class Executor:
    """Sends statements to one Database. Raises DatabaseUnavailable (with the .tom origin of
    the statement) when the server goes away or fails a statement."""

    def __init__(self, db: Database, directory: Optional[Directory] = None,
                 stats: Optional[RunStats] = None):
        self.db = db
        self.directory = directory or Directory()
        self.stats = stats or RunStats()

    def command(self, graphs: GraphNames, statement: Statement) -> tuple:
        """The GRAPH.QUERY command of `statement` on `graphs`, perspectives linked."""
        graph = graphs.graph(statement.graph)
        params = self.directory.link(graph, statement.params) if statement.links \
            else statement.params
        return query_command(graph, statement.cypher, params)

    def execute(self, graphs: GraphNames, statements: list[Statement]) -> list[list]:
        """Run `statements` in order, pipelined in one round trip; returns each one's raw
        result rows. A setup_mind statement's ids go to the directory."""
        if not statements:
            return []
        commands = [self.command(graphs, s) for s in statements]
        replies = self.pipeline(commands, statements)
        for statement, command, reply in zip(statements, commands, replies):
            if statement.template == "setup_mind.cypher":
                self.directory.learn(command[1], reply_rows(reply))
        return replies

    def pipeline(self, commands: list[tuple], statements: list[Statement]) -> list:
        """Send `commands` in one round trip; the first error reply raises, naming the
        statement's .tom origin."""
        replies = self._pipelined(commands)
        self.stats.round_trips += 1
        self.stats.statements += len(commands)
        for statement, reply in zip(statements, replies):
            if isinstance(reply, Exception):
                raise DatabaseUnavailable(f"FalkorDB failed {statement.template}: "
                                          f"{str(reply).splitlines()[0]}", statement.origin)
        return replies

    def _pipelined(self, commands: list[tuple]) -> list:
        """The replies of `commands` sent in one round trip, error replies among them."""
        try:
            return self.db.pipelined(commands, together=False)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None

    def read(self, graphs: GraphNames, statement: Statement) -> list[dict]:
        """A read statement's rows (dicts by column)."""
        try:
            return self.db.read(graphs.graph(statement.graph), statement.cypher,
                                statement.params)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        except redis.ResponseError as err:
            raise DatabaseUnavailable(f"FalkorDB failed {statement.template}: {err}",
                                      statement.origin) from None

    def read_all(self, commands: list[tuple], origins: list[tuple[int, str]]) -> list[list]:
        """The raw replies of read-only `commands`, pipelined in one round trip; a failed one
        raises DatabaseUnavailable at its origin (the .tom line it answers). They run
        together, between other clients' transactions (`Database.reads`)."""
        try:
            replies = self.db.reads(commands)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        for reply, origin in zip(replies, origins):
            if isinstance(reply, Exception):
                raise DatabaseUnavailable(f"FalkorDB failed: {str(reply).splitlines()[0]}",
                                          origin)
        return replies

    def learn_perspectives(self, graphs: GraphNames, agents: Iterable[str]) -> dict:
        """Read the perspectives of `agents`' mind graphs and the truth's, the keys each mind
        holds and the open versions of every graph (pipelined, one round trip): the
        directory learns the ids; returns {agent: (rows {id, agents, owns}, keys)} and, under None, the open
        versions' rows (read_open.cypher)."""
        agents = list(agents)
        # Together (`Database.reads`): FalkorDB runs them on its main thread, one after
        # another and between other writers' transactions, never beside a commit. Beside
        # one, FalkorDB 4.16 crashed in a traversal of read_open.cypher (signal 11 in
        # GraphBLAS's mxm) under eight writers catching up; and the graphs are read as of
        # one revision.
        commands = [query_command(graphs.mind(agent), render(template), {}, read_only=True)
                    for agent in agents
                    for template in ("read_perspectives.cypher", "read_mind_keys.cypher",
                                     "read_open.cypher")]
        commands += [query_command(graphs.world, render(template), {}, read_only=True)
                     for template in ("read_perspectives.cypher", "read_open.cypher")]
        try:
            replies = self.db.reads(commands)
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as err:
            replies = [err]
        failed = next((r for r in replies if isinstance(r, Exception)), None)
        if failed is not None:
            raise DatabaseUnavailable(f"FalkorDB failed read_perspectives.cypher: {failed}")
        self.directory.learn(graphs.world, reply_rows(replies[-2]))  # the truth
        out: dict = {None: reply_rows(replies[-1])}
        for i, agent in enumerate(agents):
            rows = reply_rows(replies[3 * i])
            keys = reply_rows(replies[3 * i + 1])
            self.directory.learn(graphs.mind(agent), rows)
            out[agent] = (rows, keys[0]["keys"] if keys else [])
            out[None] += reply_rows(replies[3 * i + 2])
        return out


def reply_rows(reply) -> list[dict]:
    """The rows of a raw `--compact` GRAPH.QUERY reply whose columns hold scalars, lists
    and maps of them (ids, chains, keys, the steps of a readiness read): [header, rows,
    stats]."""
    if len(reply) < 3:
        return []
    columns = [c[1] for c in reply[0]]
    return [dict(zip(columns, (_scalar(v) for v in row))) for row in reply[1]]


def _scalar(cell):
    """A compact-format value: [type, value]; arrays (type 6) hold compact values, maps
    (type 10) alternate a key and a compact value."""
    kind, value = cell
    if kind == 6:
        return [_scalar(v) for v in value]
    if kind == 10:
        return {value[i]: _scalar(value[i + 1]) for i in range(0, len(value), 2)}
    if kind == 1:
        return None
    return value


class Staging:
    """A run's graphs built under staging names and swapped in at the end; staging graphs
    left by a run whose process is gone (on this host) are found and dropped."""

    def __init__(self, db: Database, graphs: GraphNames):
        self.db = db
        self.final = graphs
        self.suffix = f"{STAGING_MARK}{HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.graphs = graphs.staged(self.suffix)

    def owned(self) -> list[str]:
        """Every graph on the server of this scenario, staging ones included: its world
        graph and the mind graphs under its prefix (graph_key keeps `:` and `~` out of
        names, so no other scenario's graph matches)."""
        world = self.final.world
        minds = world.removesuffix("world") + "mind:"
        return [n for n in self.db.graph_names()
                if n.split("~", 1)[0] == world or n.split("~", 1)[0].startswith(minds)]

    def drop_abandoned(self) -> None:
        """Drop staging graphs of this scenario whose run is gone: a process of this host
        that no longer runs. Another host's staging graphs are left to that host."""
        gone = []
        for name in self.owned():
            if STAGING_MARK in name:
                owner = name.rsplit(STAGING_MARK, 1)[1].split("-")
                if len(owner) == 3 and owner[0] == HOST and owner[1].isdigit() \
                        and not process_alive(int(owner[1])):
                    gone.append(name)
                elif len(owner) != 3:
                    gone.append(name)  # an older tomc's staging name: host unknown
        self.drop(gone)

    def drop(self, names: list[str]) -> None:
        if names:
            self.db.redis.delete(*names)

    def drop_mine(self) -> None:
        """Drop this run's staging graphs (after a failure)."""
        self.drop([n for n in self.owned() if n.endswith(self.suffix)])

    def swap(self, revision: int) -> None:
        """In one MULTI/EXEC: delete the scenario's current graphs (including minds of
        agents it no longer has), rename this run's staging graphs to their final names,
        and set the scenario's revision (a writer that attaches later starts from it)."""
        owned = self.owned()
        final = [name for name in owned if "~" not in name]
        staged = [name for name in owned if name.endswith(self.suffix)]
        pipe = self.db.redis.pipeline(transaction=True)
        for name in final:
            pipe.delete(name)
        for name in staged:
            pipe.rename(name, name.removesuffix(self.suffix))
        pipe.set(self.final.revision_key, revision)
        try:
            pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None

