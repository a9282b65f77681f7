"""The sessions an HTTP server holds: per memory, one supervisor session (writes, every
question) and one read-only session per agent that asked (Session.attach as_agent), opened
on first use and shared by the requests; a lock per memory runs one request at a time on it.

    held = Memories(database, names=["support"])      # names None: every memory
    with held.use("support", agent=None) as session:  # LookupError: not served / no memory
        session.apply("Maya enters chat")
    held.revision("support")  -> int                  # one GET: the console's poll
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

from tomc.api import Session, TomError
from tomc.memory import catalog
from tomc.runtime.connection import Database
from tomc.runtime.errors import Replaced


class Memories:
    """Open sessions by (memory, agent); `names` limits what is served (None: all)."""

    def __init__(self, db: Database, names: Optional[Sequence[str]] = None):
        self.db = db
        self.names = None if names is None else list(names)
        self._sessions: dict[tuple[str, Optional[str]], Session] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def use(self, name: str, agent: Optional[str] = None) -> Iterator[Session]:
        """The session of memory `name` as `agent` (None: supervisor), this request alone
        using the memory. Raises LookupError (not served, or no such memory), TomError (no
        such agent)."""
        if self.names is not None and name not in self.names:
            raise LookupError(f"memory {name!r} is not served here (served: "
                              f"{', '.join(self.names)})")
        with self._guard:
            lock = self._locks.setdefault(name, threading.RLock())
        with lock:
            try:
                yield self._session(name, agent)
            except (Replaced, TomError) as err:
                if isinstance(err, Replaced) or any(
                        d.code == "E145" for d in getattr(err, "diagnostics", [])):
                    # Dropped, perhaps created again: this request says so (nothing was
                    # written), and the next attaches to the memory there is then.
                    self._forget(name)
                raise

    def _session(self, name: str, agent: Optional[str]) -> Session:
        found = self._sessions.get((name, agent))
        if found is None:
            found = Session.attach(name, db=self.db, as_agent=agent, create=False)
            self._sessions[(name, agent)] = found
        return found

    def _forget(self, name: str) -> None:
        """Close the sessions of memory `name` (it was dropped or created again)."""
        with self._guard:
            closing = [self._sessions.pop(k) for k in list(self._sessions) if k[0] == name]
        for session in closing:
            session.close()

    def revision(self, name: str) -> int:
        """The memory's revision (how many statements were committed), in one GET: cheap
        enough to poll every 200 ms."""
        key = catalog.memory_graphs(name).revision_key
        return int(self.db.shard(key).redis.get(key) or 0)  # a cluster: the memory's shard

    def close(self) -> None:
        """Close every session (the database stays open: it is the caller's)."""
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()
