"""One writer's transactions on a scenario's graphs: optimistic, on its revision key.

FalkorDB has no transaction across graphs, but the redis server it runs in has MULTI/EXEC
(the commands run together, no other client's command between them) and WATCH (EXEC does
nothing if a watched key changed since WATCH). Every committed change of a scenario (an
event, a declaration) increments the plain key `<world graph>:rev` in its own transaction.
So a writer:

1. WATCHes the revision key and reads it: it knows the revision its state is at;
2. reads what the event needs (tomc/compiler/reads.py), on this same connection;
3. sends MULTI, the event's statements, SET rev = rev + 1, EXEC, and (for the next event)
   WATCH and GET again, all in one round trip.

If another writer committed in between, EXEC does nothing and returns nil: nothing was
written, and the writer catches up (replays what was committed) and tries again, or, if it
said which step it expected, raises StaleWrite. A reader never sees half an event: EXEC runs
every statement before any other client's command. A writer killed before EXEC leaves
nothing (the server drops a closed connection's queued commands); a server killed during
EXEC loses the whole transaction, and with `appendfsync always` an acknowledged one is on
disk. What MULTI/EXEC cannot do is stop after a statement fails at run time; the writer
then undoes the event on every graph (tomc/runtime/recovery.py).
"""

from __future__ import annotations

from typing import Optional, Sequence

import redis

from tomc.runtime.connection import CLUSTER_REDIRECTS, WAIT_TIMEOUT_MS, Database
from tomc.runtime.errors import DatabaseUnavailable, Replaced


def _acknowledged(reply) -> int:
    """The number of replicas a WAIT reply counts (0 for an error reply)."""
    return 0 if isinstance(reply, Exception) else int(reply)


class Writer:
    """A connection of its own that commits a scenario's changes one transaction each.

    `incarnation`: (key, id) of a memory's incarnation (tomc/engine/keys.py), WATCHed with
    the revision: a memory dropped and created again since the writer attached makes every
    call raise `Replaced` instead of writing into the new one."""

    def __init__(self, db: Database, revision_key: str,
                 incarnation: Optional[tuple[str, Optional[str]]] = None):
        self.db = db
        self.key = revision_key
        self.incarnation = incarnation
        self.watch = ("WATCH", revision_key, *([incarnation[0]] if incarnation else []))
        self.connection: Optional[redis.Connection] = db.connection()
        self.watched: Optional[int] = None  # the revision read under the current WATCH

    def _looks(self) -> list[tuple]:
        """The commands that read the revision (and the incarnation) under the WATCH."""
        gets = [("GET", self.key)]
        return gets + ([("GET", self.incarnation[0])] if self.incarnation else [])

    def _seen(self, replies: list) -> int:
        """The revision from the replies of `_looks`; raises Replaced when the incarnation
        is not the one this writer attached to."""
        if self.incarnation and replies[1] != self.incarnation[1]:
            self.watched = None
            raise Replaced(f"the memory was dropped or created again since this session "
                           f"attached (incarnation {self.incarnation[1]}, now "
                           f"{replies[1]}): attach again")
        self.watched = int(replies[0] or 0)
        return self.watched

    def begin(self) -> int:
        """The current revision, read under WATCH (already known after a commit)."""
        if self.watched is None:
            replies = self._send([self.watch, *self._looks()])
            return self._seen(replies[1:])
        return self.watched

    def read(self, commands: list[tuple]) -> list:
        """Read-only commands on this connection, under the WATCH (replies, errors raised)."""
        replies = self._send(commands)
        for reply in replies:
            if isinstance(reply, Exception):
                raise DatabaseUnavailable(f"FalkorDB failed a read: {reply}")
        return replies

    def commit(self, commands: list[tuple], revisions: int = 1,
               extra: Sequence[tuple] = ()) -> Optional[list]:
        """Run `commands`, then `extra` (bookkeeping: idempotency records, replies), in one
        transaction that also moves the revision on by `revisions` (one per change it
        holds); returns the replies of `commands` (an error reply is an exception object),
        or None if another writer committed since `begin` (then nothing ran)."""
        rev = self.begin() + revisions
        looks = self._looks()
        wait = self.db.options.wait_replicas
        waiting = [("WAIT", wait, WAIT_TIMEOUT_MS)] if wait else []
        batch = [("MULTI",), *commands, *extra, ("SET", self.key, rev), ("EXEC",), *waiting,
                 self.watch, *looks]
        replies = self._send(batch)
        executed = replies[-len(looks) - 2 - len(waiting)]
        self.watched = None
        if isinstance(executed, Exception):  # EXECABORT: refused before running (OOM, ...)
            raise DatabaseUnavailable(f"FalkorDB refused the transaction: {executed}")
        self._seen(replies[-len(looks):])
        if executed is None:
            return None
        acknowledged = replies[-len(looks) - 2] if waiting else None
        if waiting and _acknowledged(acknowledged) < wait:
            # Committed on the master, but a failover now could lose it: not acknowledged.
            raise DatabaseUnavailable(
                f"revision {rev} was committed on the master but only {acknowledged} of "
                f"{wait} replicas confirmed it within {WAIT_TIMEOUT_MS} ms (wait_replicas): "
                "it may be lost if the master fails now (docs/deployment.md)")
        return list(executed[:len(commands)])

    def rewatch(self) -> int:
        """The current revision, read under a fresh WATCH (UNWATCH, WATCH, GET in one round
        trip): what other writers committed since this writer last looked."""
        replies = self._send([("UNWATCH",), self.watch, *self._looks()])
        return self._seen(replies[2:])

    def read_current(self, commands: list[tuple]) -> tuple[int, list]:
        """(the current revision, read under a fresh WATCH; the replies of read-only
        `commands`), in one round trip: a read that also says whether it is up to date."""
        looks = self._looks()
        replies = self.read([("UNWATCH",), self.watch, *looks, *commands])
        return self._seen(replies[2:2 + len(looks)]), replies[2 + len(looks):]

    def forget(self) -> None:
        """Drop the WATCH: the next `begin` reads the revision afresh."""
        self.watched = None
        self._send([("UNWATCH",)])

    def _drop(self) -> None:
        """Give back a connection that failed (closed: its replies are unknown) and say the
        shard's node was lost, so the next command takes a connection from the master
        serving the key then (after a failover: the promoted replica)."""
        self.connection.disconnect()
        self.db.release(self.connection)
        self.connection = None
        self.watched = None
        self.db.lost()

    def close(self) -> None:
        """Give the connection back (UNWATCHed)."""
        if self.connection is not None:
            try:
                self.forget()
            except DatabaseUnavailable:
                return  # the failed connection was given back (`_drop`)
            self.db.release(self.connection)
            self.connection = None

    def _send(self, commands: list[tuple]) -> list:
        if self.connection is None:  # lost: a new one, from the master serving the key now
            self.connection = self.db.connection()
        connection = self.connection
        try:
            connection.send_packed_command(connection.pack_commands(commands))
            replies = []
            for _ in commands:
                try:
                    replies.append(connection.read_response())
                except redis.ResponseError as err:
                    replies.append(err)
            moved = next((r for r in replies if isinstance(r, redis.ResponseError)
                          and str(r).split(" ", 1)[0] in CLUSTER_REDIRECTS), None)
            if moved is not None:
                self._drop()
                raise DatabaseUnavailable(
                    f"the memory's shard no longer serves {self.key} ({moved}): it moved or "
                    "its master failed over; nothing of this call was committed, and the "
                    "next call finds the new master")
            return replies
        except (redis.ConnectionError, redis.TimeoutError, OSError) as err:
            self._drop()
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        except BaseException:
            # Interrupted (Ctrl-C, a parser error) with replies unread: this connection's
            # next reply would answer an older command. Drop it.
            connection.disconnect()
            self.watched = None
            raise
