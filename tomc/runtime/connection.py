"""Reaching FalkorDB: a server by URL (`--db URL` or `FALKORDB_URL`), else the embedded one.

There is no fallback: if the server named by a URL cannot be reached, or the embedded one
cannot start, `DatabaseUnavailable` is raised and the CLI exits 3.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

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

    def graph_names(self) -> list[str]:
        """Every graph on the server (GRAPH.LIST)."""
        return list(self.client.list_graphs())

    @property
    def redis(self) -> redis.Redis:
        """The underlying redis connection, for key commands (DEL, RENAME)."""
        return self.client.connection


def _from_url(url: str) -> Database:
    try:
        client = falkordb.FalkorDB.from_url(url)
        client.connection.ping()
    except (redis.RedisError, ValueError, OSError) as err:
        raise DatabaseUnavailable(f"cannot reach FalkorDB at {url}: {err}") from None
    return Database(client, url)


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
        yield _from_url(f"unix://{server.socket_path}")
