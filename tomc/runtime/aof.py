"""How much of its AOF an embedded FalkorDB must replay when it starts again, bounded.

The AOF is a snapshot and the log of writes since it. Loading the snapshot is fast (a
100,000-event memory: 250 MB in 4-5 s); replaying the log runs every logged statement
again, and costs far more per event than the event did (12-16 ms an event at 100,000
events, docs/falkordb.md check 2.14). So the log is kept short three ways:

- redis rewrites the AOF by itself once the whole AOF passes REWRITE_MIN and its log
  REWRITE_PERCENT of the snapshot (`server_args`; redis's default, 100, let a
  100,000-event memory's log take over a minute to replay): this holds whoever runs the
  server, even after its owner died;
- `LogBound`, a thread of the server's owner, asks for a rewrite whenever the log passes
  LOG_MAX, however large the snapshot, once it has rested REST times as long as its last
  rewrite took;
- a clean stop rewrites a log of COMPACT_MIN or more first (`compact`).

    bound = LogBound(socket_path, secret).start()   # ... bound.stop()
    compact(client)                                  # before SHUTDOWN
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Optional

import redis

from tomc.runtime.control import control_client

logger = logging.getLogger(__name__)

REWRITE_MIN = "16mb"
REWRITE_PERCENT = "10"
LOG_MAX = 4 * 1024 * 1024  # bytes of log: a few hundred events, seconds to replay
CHECK_S = 2.0  # how often LogBound looks
# After a rewrite it asked for, LogBound waits REST times as long as that rewrite took before
# asking for another: a rewrite writes the whole snapshot (every memory of the server), so on
# a large server it runs at most a fifth of the time, and the log grows past LOG_MAX instead.
REST = 4.0
COMPACT_MIN = 1024 * 1024  # bytes of log worth a rewrite at a clean stop
COMPACT_TIMEOUT_S = 60.0


def server_args() -> list[str]:
    """redis-server's own rewrite rule (see the module docstring)."""
    return ["--auto-aof-rewrite-percentage", REWRITE_PERCENT,
            "--auto-aof-rewrite-min-size", REWRITE_MIN]


def logged(client: redis.Redis) -> tuple[int, bool]:
    """(bytes logged since the last rewrite, whether a rewrite runs or waits to)."""
    info = client.info("persistence")
    if not info.get("aof_enabled"):
        return 0, False
    busy = bool(info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled"))
    return info.get("aof_current_size", 0) - info.get("aof_base_size", 0), busy


def compact(client: redis.Redis, timeout_s: float = COMPACT_TIMEOUT_S) -> None:
    """Rewrite the AOF as a snapshot when at least COMPACT_MIN bytes were logged since the
    last one, and wait (up to `timeout_s`) for the rewrite: the next start loads the
    snapshot instead of replaying that much. Below it the log replays in a moment, and a
    rewrite would cost every stop (a command's embedded server) the whole data set."""
    size, _ = logged(client)
    if size < COMPACT_MIN:
        return
    try:
        client.bgrewriteaof()
    except redis.ResponseError:  # one is already running: wait for it below
        pass
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not logged(client)[1]:
            return
        time.sleep(0.02)
    logger.warning("the AOF rewrite did not end within %.0f s: the next start replays the log",
                   timeout_s)


class LogBound:
    """A daemon thread that asks the server on `socket_path` for an AOF rewrite whenever
    more than `log_max` bytes were logged since the last (one rewrite at a time, and after
    one it asked for, `rest` times its duration before the next: REST). Errors are logged
    and the next look tries again: it never stops the server's owner."""

    def __init__(self, socket_path: Path, secret: Optional[str], log_max: int = LOG_MAX,
                 every_s: float = CHECK_S, rest: float = REST):
        self.socket_path, self.secret = socket_path, secret
        self.log_max, self.every_s, self.rest = log_max, every_s, rest
        self.asked = 0  # rewrites asked for so far
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tomc-aof-bound", daemon=True)

    def start(self) -> "LogBound":
        """Begin looking (every `every_s`); returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop looking; returns once the thread has (a look in progress ends within the
        connection's 5 s timeout)."""
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        client = control_client(self.socket_path, self.secret)
        began: Optional[float] = None  # when the rewrite it asked for began (running)
        free_at = 0.0  # when it may ask again (REST after its last rewrite ended)
        try:
            while not self._stop.wait(self.every_s):
                try:
                    size, busy = logged(client)
                    now = time.monotonic()
                    if began is not None and not busy:
                        free_at, began = now + self.rest * (now - began), None
                    if size > self.log_max and not busy and now >= free_at:
                        client.bgrewriteaof()
                        began, self.asked = now, self.asked + 1
                except redis.RedisError as err:  # stopping, loading, or one just began
                    logger.debug("AOF bound: %s", err)
        finally:
            client.close()
