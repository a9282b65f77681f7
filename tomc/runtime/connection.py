"""Reaching FalkorDB: a server by URL (`--db URL` or `FALKORDB_URL`), else the embedded one.

There is no fallback: if the server named by a URL cannot be reached, or the embedded one
cannot start, `DatabaseUnavailable` is raised and the CLI exits 3.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional
from urllib.parse import urlsplit, urlunsplit

import falkordb
import redis

from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import EmbeddedServer, default_data_dir


class Database:
    """A live FalkorDB connection: `graph(name)` gives a `falkordb.Graph`.

    `url` says where it is (`unix:///path` for the embedded server).
    """

    def __init__(self, client: falkordb.FalkorDB, url: str):
        self.client = client
        self.url = url

    def graph(self, name: str) -> falkordb.Graph:
        """The graph called `name` (created on first write)."""
        return self.client.select_graph(name)

    def read(self, graph: str, cypher: str, params: dict) -> list[dict]:
        """A read-only query's rows, each a dict by column name."""
        return records(self.graph(graph).ro_query(cypher, params))

    def graph_names(self) -> list[str]:
        """Every graph on the server (GRAPH.LIST)."""
        return list(self.client.list_graphs())

    @property
    def redis(self) -> redis.Redis:
        """The underlying redis connection, for key commands (DEL, RENAME)."""
        return self.client.connection


def records(result) -> list[dict]:
    """The rows of a falkordb QueryResult as dicts by column name."""
    columns = [c[1] if isinstance(c, (list, tuple)) else c for c in result.header]
    return [dict(zip(columns, row)) for row in result.result_set]


def _shown(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def _open(client_factory, shown: str) -> Database:
    """Connect, and check that the server answers and has the FalkorDB module."""
    try:
        client = client_factory()
        client.connection.ping()
        client.list_graphs()
    except redis.ResponseError as err:
        raise DatabaseUnavailable(f"{shown} answers but is not FalkorDB ({err})") from None
    except (redis.RedisError, ValueError, TypeError, OSError) as err:
        raise DatabaseUnavailable(f"cannot reach FalkorDB at {shown}: {err}") from None
    return Database(client, shown)


def _from_url(url: str) -> Database:
    # No socket timeout: a large scenario's statement may run for minutes.
    return _open(lambda: falkordb.FalkorDB.from_url(url, socket_timeout=None), _shown(url))


@contextmanager
def connect(url: Optional[str] = None, data_dir: Optional[Path] = None) -> Iterator[Database]:
    """A Database for the duration of the block.

    `url` (else `$FALKORDB_URL`) names a server, e.g. `redis://localhost:6379` or
    `unix:///tmp/redis.sock`; otherwise an embedded FalkorDB starts in `data_dir` (else
    `default_data_dir()`) and is shut down cleanly when the block ends.
    Raises DatabaseUnavailable.
    """
    url = url or os.environ.get("FALKORDB_URL")
    if url:
        yield _from_url(url)
        return
    with EmbeddedServer(data_dir or default_data_dir()) as server:
        # By path, not by URL: a data folder may hold characters a URL would misread.
        yield _open(lambda: falkordb.FalkorDB(unix_socket_path=str(server.socket_path),
                                              socket_timeout=None),
                    f"unix://{server.socket_path}")
