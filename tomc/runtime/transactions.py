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
then undoes the event on every graph (tomc/engine/recovery.py).

Optimism is not fair: a writer that must replay many events before each try can lose every
race to writers with less to replay. A writer that lost `TURN_AFTER` races in a row takes
the memory's turn: it sets `<revision key>:turn` to a token of its own (SET NX, expiring
after `TURN_MS`), which every writer also WATCHes, so the commits already in flight fail;
while the turn is someone else's, `begin` waits for it; the holder's next commit deletes it
in the same transaction. A holder killed before committing holds the others up for
`TURN_MS` at most.
"""

from __future__ import annotations

import secrets
import time
from typing import Callable, Optional, Sequence, TypeVar

import redis

from tomc.runtime.connection import MOVE_WAIT_S, WAIT_TIMEOUT_MS, Database, redirect
from tomc.runtime.errors import DatabaseUnavailable, Replaced

T = TypeVar("T")

# A writer that lost this many races in a row takes the turn (tomc/engine/live.py); the
# turn expires after TURN_MS (longer than any commit; a killed holder's turn ends then).
TURN_AFTER = 10
TURN_MS = 5000
# How long a writer waiting for someone else's turn sleeps between looks.
TURN_POLL_SECONDS = 0.002


class _Moved(DatabaseUnavailable):
    """A node answered that it no longer serves the memory's slot (a move, a failover):
    nothing of the round trip ran from that command on."""


def _acknowledged(reply) -> int:
    """The number of replicas a WAIT reply counts (0 for an error reply)."""
    return 0 if isinstance(reply, Exception) else int(reply)


class Writer:
    """A connection of its own that commits a scenario's changes one transaction each.

    `incarnation`: (key, id) of a memory's incarnation (tomc/runtime/keys.py), WATCHed with
    the revision: a memory dropped and created again since the writer attached makes every
    call raise `Replaced` instead of writing into the new one."""

    def __init__(self, db: Database, revision_key: str,
                 incarnation: Optional[tuple[str, Optional[str]]] = None,
                 serving: Optional[str] = None):
        self.db = db
        self.key = revision_key
        self.incarnation = incarnation
        # `serving`: a key looked at with the revision (whether appliers serve the memory:
        # tomc/memory/submit.py), so a session learns it with each commit, not in a round
        # trip of its own; `served` is (when, whether it existed) at the last look.
        self.serving = serving
        self.served: Optional[tuple[float, bool]] = None
        self.turn_key = f"{revision_key}:turn"
        self.watch = ("WATCH", revision_key, self.turn_key,
                      *([incarnation[0]] if incarnation else []))
        self.connection: Optional[redis.Connection] = db.connection()
        self.watched: Optional[int] = None  # the revision read under the current WATCH
        self.token = secrets.token_hex(8)  # this writer's value of the turn key
        self.turn: Optional[str] = None  # the turn key's value read under the WATCH
        # A read under the WATCH was sent again on another node (the memory moved): the
        # WATCH is gone, so the next commit commits nothing and the caller tries again.
        self.void = False
        # `wait`: how many replicas each commit waits for, where the caller says (an
        # applier: the stronger of its own and its writers'), instead of the Database's
        # `wait_replicas`; it then reads `replicas` and is not raised at. `replicas`: how
        # many confirmed the last commit (None: it did not wait).
        self.wait: Optional[int] = None
        self.replicas: Optional[int] = None

    def _looks(self) -> list[tuple]:
        """The commands that read the revision, the turn (and the incarnation) under the
        WATCH."""
        gets = [("GET", self.key), ("GET", self.turn_key)]
        return gets + ([("GET", self.incarnation[0])] if self.incarnation else []) \
            + ([("EXISTS", self.serving)] if self.serving else [])

    def _seen(self, replies: list) -> int:
        """The revision from the replies of `_looks`; raises Replaced when the incarnation
        is not the one this writer attached to."""
        self.turn = replies[1].decode() if isinstance(replies[1], bytes) else replies[1]
        if self.incarnation and replies[2] != self.incarnation[1]:
            self.watched = None
            raise Replaced(f"the memory was dropped or created again since this session "
                           f"attached (incarnation {self.incarnation[1]}, now "
                           f"{replies[2]}): attach again")
        self.watched = int(replies[0] or 0)
        if self.serving:
            self.served = (time.monotonic(), bool(replies[-1]))
        return self.watched

    def begin(self) -> int:
        """The current revision, read under WATCH (already known after a commit); while
        another writer holds the turn, waits for it to end."""
        if self.watched is None:
            replies = self._again(lambda: self._send([self.watch, *self._looks()]))
            self._seen(replies[1:])
            self.void = False
        return self._after_turn()

    def _others_turn(self) -> bool:
        return self.turn is not None and self.turn != self.token

    def _after_turn(self) -> int:
        """The revision once no other writer holds the turn (read again under a fresh
        WATCH while one does)."""
        while self._others_turn():
            time.sleep(TURN_POLL_SECONDS)
            replies = self._again(lambda: self._send([("UNWATCH",), self.watch,
                                                      *self._looks()]))
            self._seen(replies[2:])
        return self.watched

    def take_turn(self) -> None:
        """Ask for the turn (after losing TURN_AFTER races): if no one holds it, this
        writer does until its next commit; either way the next `begin` looks again."""
        self._again(lambda: self._send([("UNWATCH",),
                                        ("SET", self.turn_key, self.token, "NX", "PX", TURN_MS)]))
        self.watched = None

    def end_turn(self) -> None:
        """Give the turn back without committing (the statements were refused): deleted
        only if it is still this writer's (WATCH, GET, MULTI, DEL, EXEC)."""
        if self.connection is None:
            return
        replies = self._again(lambda: self._send([("UNWATCH",), ("WATCH", self.turn_key),
                                                  ("GET", self.turn_key)]))
        mine = replies[2] in (self.token, self.token.encode())
        self._send([("MULTI",), ("DEL", self.turn_key), ("EXEC",)] if mine else [("UNWATCH",)])
        self.watched = None

    def read(self, commands: list[tuple]) -> list:
        """Read-only commands on this connection, under the WATCH (replies, errors raised).
        Where the memory moved they are read on its new master, and the WATCH is void: the
        next `commit` commits nothing (returns None), as after a lost race."""
        try:
            replies = self._send(commands)
        except _Moved:
            replies = self._again(lambda: self._send(commands))
            self.void = True
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
        if self.void:  # the reads it was made from were not under the WATCH
            self.void = False
            self.watched = None
            return None
        if self.watched is None:
            self.begin()
        if self._others_turn():  # taken since the caller looked: its commit fails anyway
            return None
        rev = self.watched + revisions
        looks = self._looks()
        wait = self.db.options.wait_replicas if self.wait is None else self.wait
        waiting = [("WAIT", wait, WAIT_TIMEOUT_MS)] if wait or self.wait is not None else []
        # The turn ends with the commit that used it (a writer waiting sees it gone).
        ending = [("DEL", self.turn_key)] if self.turn == self.token else []
        batch = [("MULTI",), *commands, *extra, *ending, ("SET", self.key, rev), ("EXEC",),
                 *waiting, self.watch, *looks]
        replies = self._send(batch, moved_ok=True)
        moved = any(redirect(r) for r in replies)  # the connection was given back
        executed = replies[-len(looks) - 2 - len(waiting)]
        self.watched = None
        if isinstance(executed, Exception):  # EXECABORT: refused before running (OOM, ...)
            if moved:
                return None  # on a node that no longer serves it: try again on the new one
            raise DatabaseUnavailable(f"FalkorDB refused the transaction: {executed}")
        if not moved:  # else the WATCH after EXEC was refused: the next `begin` looks
            self._seen(replies[-len(looks):])
        if executed is None:
            return None
        acknowledged = replies[-len(looks) - 2] if waiting else None
        self.replicas = _acknowledged(acknowledged) if waiting else None
        if waiting and self.wait is None and self.replicas < wait:
            # Committed on the master, but a failover now could lose it: not acknowledged.
            raise DatabaseUnavailable(
                f"revision {rev} was committed on the master but only {acknowledged} of "
                f"{wait} replicas confirmed it within {WAIT_TIMEOUT_MS} ms (wait_replicas): "
                "it may be lost if the master fails now (docs/deployment.md)")
        return list(executed[:len(commands)])

    def rewatch(self) -> int:
        """The current revision, read under a fresh WATCH (UNWATCH, WATCH, GET in one round
        trip): what other writers committed since this writer last looked."""
        replies = self._again(lambda: self._send([("UNWATCH",), self.watch, *self._looks()]))
        self._seen(replies[2:])
        return self._after_turn()

    def read_current(self, commands: list[tuple]) -> tuple[int, list]:
        """(the revision the replies of read-only `commands` were read at; the replies),
        in one round trip: a read that also says whether it is up to date. The revision
        and the reads run together inside MULTI/EXEC (a query sent alone can see half of
        another client's transaction: `Database.read`); after it, the revision is read
        again under a fresh WATCH (EXEC ends a WATCH), for the next `begin`."""
        looks = self._looks()
        replies = self._again(lambda: self._send([("UNWATCH",), ("MULTI",), *looks,
                                                  *commands, ("EXEC",), self.watch, *looks]))
        together = replies[2 + len(looks) + len(commands)]
        if isinstance(together, Exception):  # EXECABORT: a command refused before running
            raise DatabaseUnavailable(f"FalkorDB refused a read: {together}")
        for reply in together:
            if isinstance(reply, Exception):
                raise DatabaseUnavailable(f"FalkorDB failed a read: {reply}")
        revision = self._seen(together[:len(looks)])  # the state read (incarnation checked)
        self._seen(replies[-len(looks):])  # what the fresh WATCH saw, for the next `begin`
        return revision, list(together[len(looks):])

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

    def _again(self, send: Callable[[], T]) -> T:
        """`send()`, a round trip that stands alone (its own WATCH), sent again while a
        node answers that it no longer serves the memory (`_Moved`: the next connection is
        the master serving it then), for MOVE_WAIT_S at most."""
        deadline, pause = time.monotonic() + MOVE_WAIT_S, 0.02
        while True:
            try:
                return send()
            except _Moved:
                if time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(2 * pause, 0.5)

    def _send(self, commands: list[tuple], moved_ok: bool = False) -> list:
        """The replies of `commands` on this writer's connection. A reply saying the node
        no longer serves the memory gives the connection back (the next one is the new
        master's) and raises `_Moved`, or, with `moved_ok`, returns the replies."""
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
            moved = next((r for r in replies if redirect(r)), None)
            if moved is not None:
                self._drop()
                if moved_ok:
                    return replies
                raise _Moved(
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
