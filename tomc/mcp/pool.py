"""The sessions an MCP server's tool calls run on: several calls at once, each on sessions of
its own (a Session is used by one thread at a time: tomc/api.py).

The SDK runs each sync tool on a worker thread; a call holds one *set* of sessions (a
supervisor's: its session; an agent's: its reader and the writer it speaks through) for its
duration. A call that finds every set busy attaches a new one, up to `size` sets, then
waits for one to come free: a call waiting on a slow or hung server holds its own set
only. Sets are attached when first needed (attaching replays the memory), kept while the
server runs, and closed with it.

The tools are registered once, over `Current` stand-ins: `pool.current(0)` is, inside a
call, the session of that role in the set the calling thread holds.

    pool = SessionPool(lambda: (Session.attach("support", db=database),), size=4)
    session = pool.current(0)
    with pool.held():            # what Guard does around every tool call
        session.believes("Maya", "refund.status")
    pool.close()
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from tomc.api import Session

# How many tool calls an MCP server answers at once (`tomc mcp --calls`).
CALLS = 4


class SessionPool:
    """Sets of sessions made by `make` (the first made now), at most `size` of them."""

    def __init__(self, make: Callable[[], Sequence[Session]], size: int = CALLS):
        if size < 1:
            raise ValueError(f"a server answers at least one call at a time, not {size}")
        self._make = make
        self._size = size
        first = tuple(make())
        self._all: list[tuple[Session, ...]] = [first]
        self._free: list[tuple[Session, ...]] = [first]
        self._making = 0
        self._changed = threading.Condition()
        self._local = threading.local()

    @property
    def first(self) -> tuple[Session, ...]:
        """The set made first (for what every set shares: the memory's name, the agent)."""
        return self._all[0]

    @contextmanager
    def held(self) -> Iterator[tuple[Session, ...]]:
        """A set of sessions for the calling thread until the block ends (the one it holds
        already, if it holds one)."""
        held = getattr(self._local, "held", None)
        if held is not None:
            yield held
            return
        chosen = self._take()
        self._local.held = chosen
        try:
            yield chosen
        finally:
            self._local.held = None
            with self._changed:
                self._free.append(chosen)
                self._changed.notify()

    def _take(self) -> tuple[Session, ...]:
        with self._changed:
            while not self._free and len(self._all) + self._making >= self._size:
                self._changed.wait()
            if self._free:
                return self._free.pop()
            self._making += 1
        try:  # attach outside the lock: the other calls go on meanwhile
            made = tuple(self._make())
        finally:
            with self._changed:
                self._making -= 1
                self._changed.notify()
        with self._changed:
            self._all.append(made)
        return made

    def current(self, role: int) -> "Current":
        """The session of `role` (its index in a set) of the set the calling thread holds."""
        return Current(self, role)

    def holding(self, role: int) -> Session:
        held = getattr(self._local, "held", None)
        if held is None:
            raise RuntimeError("a session of the pool is used outside a tool call "
                               "(SessionPool.held)")
        return held[role]

    def close(self) -> None:
        """Close every set."""
        for sessions in self._all:
            for session in sessions:
                session.close()


class Current:
    """Stands for the session of one role in the set the calling thread holds
    (`SessionPool.current`); `memory` and `agent`, the same in every set, are answered
    outside a call too."""

    _SHARED = ("memory", "agent")

    def __init__(self, pool: SessionPool, role: int):
        self._pool = pool
        self._role = role

    def __getattr__(self, name: str) -> Any:
        if name in self._SHARED:
            return getattr(self._pool.first[self._role], name)
        return getattr(self._pool.holding(self._role), name)
