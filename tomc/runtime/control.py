"""The administrator's control connection to a data folder's server: one try, no retries,
a bounded wait (a health check, an AOF rewrite, SHUTDOWN), never a client library's silent
backoff past the bound its caller promises.

    client = control_client(socket_path, secret, timeout_s=3.0)
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def control_client(socket_path: Path, secret: Optional[str],
                   timeout_s: float = 5.0) -> redis.Redis:
    """A client of the server on `socket_path` (password `secret`) whose every command is
    tried once and waits at most `timeout_s` to connect and to be answered."""
    return redis.Redis(unix_socket_path=str(socket_path), password=secret,
                       socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                       retry=Retry(NoBackoff(), 0))
