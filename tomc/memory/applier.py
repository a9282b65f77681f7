"""One applier per memory at a time: the writer that commits what every other process submits
(docs/storage.md, "The applier").

Writers (`Session.apply`, `tomc memory apply`, MCP `record`) push requests on the memory's
queue (tomc/memory/submit.py) and wait for their reply. The applier, holding the memory's
lease (`memory_key(NAME, 'applier')`, renewed once a third of it has passed, before each
request it checks), moves what is queued to its processing list (LMOVE: a request is never
only in the applier's memory), checks each
request after the ones before it, and commits the events of many requests in ONE
MULTI/EXEC (group commit): each event keeps its own step, and the same transaction holds
each statement's idempotency record. Only once the EXEC's replies show that every statement
succeeded does it answer each request and take it off the processing list (a statement that
failed at run time gets its group undone, records and all, and its requests answered as
failed, or applied again alone). So a reader sees a request whole or not at all, and an
acknowledged request is committed. Requests are taken in arrival order, so no writer starves
and no race is lost.

Nothing a request holds can stop the applier: a request that is not one (any text an
agent's user pushed), or whose taking, checking or applying fails in a way the applier does
not expect, is answered with the error (when its reply list can be trusted) and moved to
the memory's dead-letter list (`memory_key(NAME, 'dead')`, the newest DEAD_KEEP kept:
`tomc memory requests`), and the applier goes on with the next.

An applier killed mid-batch leaves its requests in the processing list; the next one to
take the lease puts them back at the head of the queue, undoes a half-applied event, and
applies them again: what committed before has its idempotency records, so it is answered
with its original steps and not applied twice.

A request holding a declaration (`agents`, `rooms`), or an event that reads the graphs
before it is compiled (tomc/compiler/reads.py), or resumed after part of it committed,
commits alone, as an embedded writer does (tomc/memory/writes.py): what is left of it in one
transaction if it can share one, else one transaction per statement.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

import redis

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.engine import event_codec
from tomc.engine.base import Behind
from tomc.engine.live import CHANGES, DECLARATIONS, LiveScenario
from tomc.memory import acl, catalog, served_reads, submit, writes
from tomc.memory.environment import Environment, check_new_memory
from tomc.memory.meaning import embed_beside
from tomc.memory.opening import (
    refuse,
    same_policy,
    statements_of,
)
from tomc.memory.submit import REPLY_TTL_S
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable, Replaced, StaleWrite, TomError
from tomc.runtime.keys import appliers_key, memory_key, memory_name

log = logging.getLogger(__name__)

LEASE_S = 5
# How long an applier takes from the agents' queues it knows before it reads their users
# again (a take that finds nothing reads them at once).
USERS_S = 5.0
# How long an applier trusts the number of replicas it read (INFO replication).
REPLICAS_S = 5.0
# The fields of a request (tomc/memory/submit.py): text ones always there, others or null.
REQUIRED = ("id", "key", "text", "reply", "mac")
OPTIONAL = ("create", "policy", "incarnation", "as")
BATCH = 64
# How many of one agent's requests a batch takes (its reads run after the batch's writes):
# the rest wait for the next batch, behind no one.
AGENT_SLICE = 8
# A group that keeps losing races to embedded writers (not through the applier).
MAX_TRIES = 100
# The dead-letter list keeps the newest DEAD_KEEP requests, each with at most PREVIEW
# characters of what was queued.
DEAD_KEEP = 1000
PREVIEW = 2000
# `tomc serve`'s pool: threads that drain woken memories, and memories kept attached
# between drains (each holds its state and one connection).
WORKERS = max(2, os.cpu_count() or 2)
WARM = 64
# How long a drained memory keeps its worker, waiting for its next request, while no
# other memory waits for one; how many batches it applies before it lets a memory that
# waits have the worker.
LINGER_S = 0.2
SLICE = 8
# Errors that say the server's state, not a request's: the batch is tried again later.
SERVER_STATES = (redis.exceptions.OutOfMemoryError, redis.exceptions.BusyLoadingError,
                 redis.exceptions.ReadOnlyError, redis.exceptions.ClusterDownError,
                 redis.exceptions.TryAgainError)
# The lease renewed, or given back, only by the applier that holds it (its token).
_RENEW = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
          "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end")
_RELEASE = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
            "return redis.call('DEL', KEYS[1]) else return 0 end")
# Requests moved to processing (KEYS[1]) from the writers' queues (KEYS[3], the
# administrator's, then each agent's), one from each in turn: up to ARGV[1] in all and
# ARGV[2] from each agent, so no writer's requests wait behind another's. An agent's
# queue is first cut to its ARGV[3] oldest (what its user pushed past the bound is
# dropped: [queue, how many] returned). Each request taken comes with its queue's index
# (0: the administrator's). The bell (KEYS[2]) goes once every queue is empty.
_TAKE = """
local taken, dropped, from = {}, {}, {}
for i = 4, #KEYS do
  local over = redis.call('LLEN', KEYS[i]) - tonumber(ARGV[3])
  if over > 0 then
    redis.call('LTRIM', KEYS[i], 0, tonumber(ARGV[3]) - 1)
    dropped[#dropped + 1] = {KEYS[i], over}
  end
end
local more = true
while more and #taken < tonumber(ARGV[1]) do
  more = false
  for i = 3, #KEYS do
    if #taken >= tonumber(ARGV[1]) then break end
    if i == 3 or (from[i] or 0) < tonumber(ARGV[2]) then
      local raw = redis.call('LMOVE', KEYS[i], KEYS[1], 'LEFT', 'RIGHT')
      if raw then
        taken[#taken + 1] = {raw, i - 3}
        from[i] = (from[i] or 0) + 1
        more = true
      end
    end
  end
end
local left = 0
for i = 3, #KEYS do left = left + redis.call('LLEN', KEYS[i]) end
local rung = redis.call('EXISTS', KEYS[2])
if left == 0 then redis.call('DEL', KEYS[2]) end
return {taken, dropped, rung}
"""


class LeaseLost(Exception):
    """The memory's lease lapsed while its applier applied a batch (another may hold it
    now): the batch stops; what committed has its records, the rest is the new holder's."""


@dataclass
class Request:
    """A queued write: its JSON `raw` (as queued: LREM removes it by value), the fields
    of it, and what checking found (`parsed` statements, what is `left` to commit)."""

    raw: str
    fields: dict
    parsed: list = field(default_factory=list)
    left: Optional[writes.Pending] = None
    answered: bool = False

    @property
    def writer(self) -> str:
        """Whose idempotency keys the request's key is among: its agent's, or the
        administrator's (tomc/memory/writes.py)."""
        return self.fields.get("as") or writes.ADMIN


class Applier:
    """The applier of memory `name` on `db` (run `run(stop)` in a thread or process)."""

    def __init__(self, db: Database, name: str, lease_s: float = LEASE_S):
        self.db = db.shard(memory_key(name))  # every key of the memory is on its shard
        self.env = Environment(self.db)  # builds its live scenario (the connection is db's)
        self.name = name
        self.lease_s = lease_s
        self.token = uuid.uuid4().hex
        self.held_at: Optional[float] = None  # when the lease was last taken or renewed
        self.live: Optional[LiveScenario] = None
        self.incarnation: Optional[str] = None
        self.queue = memory_key(name, "queue")
        self.bell = memory_key(name, "bell")
        self.processing = memory_key(name, "processing")
        self.lease = memory_key(name, "applier")
        self.dead = memory_key(name, "dead")
        # (when read, the agents' FalkorDB users), whose queues `_take` takes from.
        self._users: Optional[tuple[float, list[str]]] = None
        self._replica_count: Optional[tuple[float, int]] = None  # (when read, how many)

    # ---------------------------------------------------------------- the loop

    def run(self, stop: threading.Event, idle_s: Optional[float] = None) -> None:
        """Apply requests until `stop` is set (or nothing came for `idle_s` seconds)."""
        last = time.monotonic()
        try:
            while not stop.is_set():
                try:
                    self.db.current()  # a cluster's shard: the master serving it now
                    if not self._hold():
                        stop.wait(self.lease_s / 5)
                        continue
                    batch = self._take()
                    if batch:
                        self._apply(batch)
                        last = time.monotonic()
                    elif idle_s is not None and time.monotonic() - last > idle_s:
                        return
                except LeaseLost:
                    self._close()  # the new holder applies the rest; look again later
                except (DatabaseUnavailable, redis.RedisError):
                    # Lost the server or the state: start again from what is stored, the
                    # batch back in the queue (what of it committed has its records). On a
                    # cluster the next round looks up the shard's master again (a failover).
                    self.held_at = None
                    self.db.lost()
                    self._close()
                    stop.wait(0.5)
                    try:
                        self._requeue()
                    except redis.RedisError:
                        pass
        finally:
            self._close()
            try:
                self.db.redis.eval(_RELEASE, 1, self.lease, self.token)
            except redis.RedisError:
                pass

    def drain(self, stop: threading.Event, linger: Callable[[], float] = lambda: 0.0,
              others_wait: Callable[[], bool] = lambda: False) -> bool:
        """Apply what is queued, then give the lease back (an idle memory holds nothing
        and costs no command): what `serve_appliers`' workers run when the memory is
        woken. Once the queue is empty it waits `linger()` seconds more for the next
        request (a writer's next write is often right behind its reply) before giving the
        lease back. Returns at once when another applier holds the lease (it looks at the
        queue again after giving the lease back, so nothing queued meanwhile waits).
        Returns False when it stopped after SLICE batches because `others_wait()` (other
        memories wait for a worker) with requests left: the caller wakes it again; raises
        LeaseLost when the lease lapsed during a batch."""
        batches = 0
        while not stop.is_set():
            try:
                self.db.current()
                if not self._hold():
                    if self._held_by_another():
                        return True
                    continue  # given back meanwhile: take it
                if batches >= SLICE and others_wait():
                    self._release()
                    return False
                batch = self._take(block=0)
                if not batch:
                    wait = linger()
                    batch = self._take(block=wait) if wait > 0 else []
                if batch:
                    self._apply(batch)
                    batches += 1
                    continue
                self._release()
                if not self.db.redis.exists(self.queue, self.bell):
                    return True
                # Queued between the last take and the release: go on.
            except LeaseLost:
                self._close()  # mid-batch: its state is not the graphs'
                raise
            except (DatabaseUnavailable, redis.RedisError):
                # Start again from what is stored, the batch back in the queue (what of it
                # committed has its records); the caller wakes the memory again.
                self.held_at = None
                self.db.lost()
                self._close()
                try:
                    self._requeue()
                except redis.RedisError:
                    pass
                raise

    def _held_by_another(self) -> bool:
        """Whether another applier holds the lease still; if so, its end is in the sorted
        set `serve_appliers` sweeps, so that the memory is woken again if that applier
        died holding it (a live one looks at the queue after giving the lease back)."""
        left = self.db.redis.pttl(self.lease)
        if left == -2:
            return False
        if not self.db.clustered:
            self.db.redis.zadd(appliers_key("held"),
                               {self.name: time.time() + max(left, 0) / 1000 + 0.1})
        return True

    def _release(self) -> None:
        """Give the lease back if this applier holds it."""
        self.held_at = None
        r = self.db.redis
        if r.eval(_RELEASE, 1, self.lease, self.token) and not self.db.clustered:
            r.zrem(appliers_key("held"), self.name)

    def _hold(self) -> bool:
        """Take or renew the lease; on taking it, resume what a previous applier left. A
        lease renewed less than a third of its life ago is held without asking (two round
        trips per request otherwise): it cannot have lapsed since, and a stall long enough
        to let it lapse is seen on this clock too."""
        now = time.monotonic()
        if self.held_at is not None and now - self.held_at < self.lease_s / 3:
            return True
        r = self.db.redis
        if r.eval(_RENEW, 1, self.lease, self.token, int(self.lease_s * 1000)):
            self._held()
            self.held_at = now
            return True
        self.held_at = None
        if not r.set(self.lease, self.token, nx=True, ex=int(self.lease_s)):
            return False
        self._held()
        if self._requeue():
            self._close()  # a previous applier died mid-batch: attach again (recovery)
        self.held_at = now
        return True

    def _keep_lease(self) -> None:
        """Renew the lease in the middle of a batch (the batch is this applier's, in its
        processing list); raises LeaseLost when another applier holds it now (the batch
        outlived the lease). A lease that is gone (the memory dropped meanwhile) is taken
        again, nothing requeued."""
        now = time.monotonic()
        if self.held_at is not None and now - self.held_at < self.lease_s / 3:
            return
        r = self.db.redis
        if r.eval(_RENEW, 1, self.lease, self.token, int(self.lease_s * 1000)) or \
                r.set(self.lease, self.token, nx=True, ex=int(self.lease_s)):
            self._held()
            self.held_at = now
            return
        raise LeaseLost(self.name)

    def _held(self) -> None:
        """Say until when this memory's lease is held, in the server-wide sorted set that
        `serve_appliers` sweeps for lapsed leases (none on a cluster: no server-wide key)."""
        if not self.db.clustered:
            self.db.redis.zadd(appliers_key("held"), {self.name: time.time() + self.lease_s})

    def _requeue(self) -> int:
        """The requests being applied back at the head of the administrator's queue, in
        their order; how many there were. An agent's goes there too, not back to its own
        queue: its reply list is the request's own text, not to be trusted for where it
        came from, and its own queue may be full meanwhile (the next take would trim what
        its writers were told was queued). At most a batch, once; its signature is checked
        as ever (docs/security.md)."""
        moved = 0
        while self.db.redis.lmove(self.processing, self.queue, "RIGHT", "LEFT") is not None:
            moved += 1
        return moved

    def _close(self) -> None:
        """Forget the live scenario, and that the lease is held: whatever made this applier
        start again (a lost server, a dropped memory) asks the server for the lease anew
        (a server restarted without persistence has forgotten it)."""
        self.held_at = None
        if self.live is not None:
            self.live.engine.close()
        self.live = None

    def _attach(self) -> Optional[LiveScenario]:
        """The memory's live scenario (its half-applied event undone), or None if it does
        not exist."""
        if self.live is None:
            stored = catalog.read(self.db, self.name)
            if stored is None:
                return None
            self.live = self.env.attached(stored)
            self.incarnation = self.live.engine.incarnation[1]
        return self.live

    def _take(self, block: float = 1.0) -> list[Request]:
        """The requests queued, oldest first from each writer's queue in turn (at most
        BATCH; AGENT_SLICE from each agent), moved to processing; waits up to `block`
        seconds for a writer's bell first (0: not at all). One round trip with the bell
        (the script), two when the agents' users (tomc/memory/acl.py), which name their
        queues, are read again: after USERS_S, or when a writer rang and the take found
        every queue it knows empty (an agent granted since may have queued)."""
        r = self.db.redis
        stale = self._users is None or time.monotonic() - self._users[0] > USERS_S
        if block or stale:
            pipe = r.pipeline(transaction=False)
            if block:
                pipe.blpop([self.bell], block)
            if stale:
                pipe.hvals(acl.users_key(catalog.memory_graphs(self.name)))
            found = pipe.execute()
            if stale:
                self._users = (time.monotonic(), sorted(found[-1]))
        queues = [self.queue, *(submit.queue_of(self.name, u) for u in self._users[1])]
        raws, dropped, rung = r.eval(_TAKE, 2 + len(queues), self.processing, self.bell,
                                     *queues, BATCH, AGENT_SLICE, submit.AGENT_QUEUED)
        if not raws and not dropped and not stale and (rung or (block and found[0])):
            # A writer rang, and nothing was where it looked: an agent granted since may
            # have queued (an idle take, rung by no one, costs no more round trips)
            self._users = None
            return self._take(0)
        for queue, count in dropped:
            self._note(f"{count} entries pushed on {queue} past its bound "
                       f"({submit.AGENT_QUEUED} waiting) were dropped unread")
        requests = []
        for raw, origin in raws:
            if origin and len(raw) > submit.AGENT_BYTES:
                self._bury(raw, f"larger than an agent's request may be "
                                f"({submit.AGENT_BYTES:,} bytes)")
                continue
            try:
                fields = json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: an array nested deep
                fields = None
            if self._well_formed(fields):
                requests.append(Request(raw, fields))
            else:  # not answered: its reply list cannot be trusted
                self._bury(raw, "not a request: a JSON object with the fields "
                                "tomc/memory/submit.py gives one")
        return requests

    def _well_formed(self, fields) -> bool:
        """Whether a queued request has the shape `submit.submit` gives it, its reply list
        among this memory's: an agent's user may push any text on the queue (docs/
        security.md), and nothing of a malformed one is read further (a reply list named
        by it could be any key)."""
        if isinstance(fields, dict) and "read" in fields:  # an agent's read
            return served_reads.well_formed(fields) and fields["reply"].startswith(
                memory_key(self.name, "reply") + ":")
        if not isinstance(fields, dict) or any(
                not isinstance(fields.get(name), str) for name in REQUIRED):
            return False
        if any(fields.get(name) is not None and not isinstance(fields[name], str)
               for name in OPTIONAL):
            return False
        after = fields.get("after_step")
        if after is not None and (isinstance(after, bool) or not isinstance(after, int)):
            return False
        wait = fields.get("wait_replicas", 0)
        if isinstance(wait, bool) or not isinstance(wait, int) or wait < 0:
            return False
        return fields["reply"].startswith(memory_key(self.name, "reply") + ":")

    # ---------------------------------------------------------------- a batch

    def _apply(self, batch: list[Request]) -> None:
        """Apply `batch`; a failure the applier does not expect (anything but a lost
        server, which the loop handles) applies each request again alone from what is
        stored, and buries the one it fails on: no request stops the applier."""
        try:
            self._applied(batch)
        except (DatabaseUnavailable, redis.ConnectionError, redis.TimeoutError, LeaseLost):
            raise
        except redis.ResponseError as err:
            if isinstance(err, SERVER_STATES) or str(err).startswith(("BUSY", "MASTERDOWN")):
                raise  # the server's state, not the request's: tried again later
            self._failed(batch, err)
        except Exception as err:  # noqa: BLE001 (any bug or input that reaches one)
            self._failed(batch, err)

    def _failed(self, batch: list[Request], err: Exception) -> None:
        """After an unexpected failure applying `batch`: each request not answered yet
        applied again alone, from what is stored; alone, it is buried."""
        self._close()  # whatever state it left is not trusted: attach again
        left = [request for request in batch if not request.answered]
        if len(batch) > 1:
            for request in left:
                self._apply([request])
            return
        for request in left:
            log.error("memory %s: a request failed (%s: %s); moved to the dead-letter list",
                      self.name, type(err).__name__, str(err)[:200], exc_info=err)
            self._bury(request.raw, f"{type(err).__name__}: {err}"[:PREVIEW], request)

    def _applied(self, batch: list[Request]) -> None:
        rest = [request for request in batch if self._admitted(request)]
        reads = [request for request in rest if "read" in request.fields]
        self._written([request for request in rest if "read" not in request.fields])
        # Agents' reads after the batch's writes, which they never hold up.
        for request in reads:
            self._keep_lease()
            self._answer(request, served_reads.answer(self.db, self.name, request.fields,
                                                      len(request.raw)))

    def _written(self, rest: list[Request]) -> None:
        """Apply the write requests `rest` (admitted), creating the memory first if one
        asks to."""
        while rest and self._attach() is None:
            first = rest.pop(0)
            if self._create(first) is not None:
                rest.insert(0, first)
        if not rest:
            return
        try:
            self.live.catch_up()  # embedded writers (no applier) may have committed
        except Replaced:  # dropped and created again: start from the new memory
            self._close()
            self._written(rest)
            return
        self._waiting(rest)
        self._run(rest)
        if self.live is not None:  # its new facts embedded beside: no write waits for it
            embed_beside(self.db, self.live.engine.graphs, self.live.step)

    def _waiting(self, batch: list[Request]) -> None:
        """Make each commit of `batch` wait for the stronger of this applier's
        `wait_replicas` and its writers' (a writer's asks at most for the replicas the
        shard has: an agent asking for more would hold the memory WAIT_TIMEOUT_MS a
        batch). The replies say how many confirmed it (`replicas`)."""
        own = self.db.options.wait_replicas
        asked = max([r.fields.get("wait_replicas", 0) for r in batch], default=0)
        writer = self.live.engine.attach_writer()
        writer.replicas = None  # a batch that commits nothing confirms nothing
        writer.wait = max(own, min(asked, self._replicas())) if asked or own else None

    def _replicas(self) -> int:
        """How many replicas the memory's master has now (INFO, read again each
        REPLICAS_S)."""
        now = time.monotonic()
        if self._replica_count is None or now - self._replica_count[0] > REPLICAS_S:
            info = self.db.redis.info("replication")
            self._replica_count = (now, int(info.get("connected_slaves", 0)))
        return self._replica_count[1]

    def _run(self, batch: list[Request], tries: int = 0) -> None:
        """Check the requests in order, committing them in groups; `tries`: how many times
        this batch lost the race to embedded writers already (MAX_TRIES ends it)."""
        group: list[Request] = []
        for request in batch:
            self._keep_lease()
            if group and request.fields["key"] in {g.fields["key"] for g in group}:
                self._commit(group, tries)  # the same write twice: the second sees the first
                group = []
            alone = self._check(request)
            if alone is None:
                continue  # answered already
            if alone:
                self._commit(group, tries)
                group = []
                self._commit_alone(request)
            else:
                group.append(request)
        self._commit(group, tries)

    def _admitted(self, request: Request) -> bool:
        """Whether `request` is signed by its sender (tomc/memory/submit.py): the
        administrator, or the agent named in `as` (with its own password), whose request
        may hold only its own speech (`tell`, `says` with it as the speaker), creates no
        memory and asks no policy, or read its own mind (tomc/memory/served_reads.py).
        Else it is answered (`refused`) and dropped."""
        f = dict(request.fields)
        mac, agent = f.pop("mac", None), f.get("as")
        password = self.db.redis.connection_pool.connection_kwargs.get("password") or ""
        graphs = catalog.memory_graphs(self.name, [agent] if agent is not None else [])
        if agent is not None:
            password = acl.user_password(self.db, acl.user_name(graphs, agent))
        if not isinstance(mac, str) or not hmac.compare_digest(
                mac, submit.signature(json.dumps(f), password)):
            self._answer(request, {"error": "refused", "message": "the request is not signed "
                                   "by its sender's credential", "committed": []})
            return False
        if agent is None:
            return True
        if not f["reply"].startswith(memory_key(self.name, "reply",
                                                acl.user_name(graphs, agent)) + ":"):
            self._bury(request.raw, f"a reply list that is not {agent}'s own")
            request.answered = True
            return False
        if "read" in f:
            return True
        try:
            _, parsed = statements_of(f["text"])
        except TomError:
            parsed = []  # answered as bad input by `_check`
        other = next((s for s in parsed if not isinstance(s, (ast.Tell, ast.Says))
                      or s.speaker.text != agent), None)
        if other is None and f.get("create") is None and f.get("policy") is None:
            return True
        self._answer(request, {"error": "refused", "committed": [], "message": (
            f"a request sent with {agent}'s credential may only tell or say as {agent}"
            + ("" if other is None else f", not {type(other).__name__.lower()} "
               f"({getattr(getattr(other, 'speaker', None), 'text', 'no speaker')})"))})
        return False

    def _create(self, request: Request) -> Optional[LiveScenario]:
        """Create the memory for its first request (its `create` policy), checked first:
        bad input creates nothing. None when the request was answered instead."""
        policy = request.fields.get("create")
        if policy is None:
            self._answer(request, {"error": "no_memory",
                                   "message": f"no memory called {self.name!r}"})
            return None
        try:
            check_new_memory(self.name, request.fields["text"], policy)
            self.env.create(self.name, policy)
        except TomError as err:
            self._answer(request, _diagnostics(err.diagnostics, err.text))
            return None
        return self._attach()

    def _check(self, request: Request) -> Optional[bool]:
        """Check `request` after everything before it: None when it was answered (bad
        input, stale, a replaced memory, or committed before under its key); else whether
        it must commit alone (the checker has then taken nothing of it), or False with its
        statements taken by the checker, to commit with the group."""
        f = request.fields
        if f.get("incarnation") not in (None, self.incarnation) \
                and catalog.incarnation(self.db, self.name)[1] != self.incarnation:
            self._close()  # this applier's memory was dropped: take the new one
            if self._attach() is None:
                self._answer(request, {"error": "replaced", "message": _replaced(self.name)})
                return None
        live = self.live
        if f.get("incarnation") not in (None, self.incarnation):
            self._answer(request, {"error": "replaced", "message": _replaced(self.name)})
            return None
        stored = live.scenario.policy.name
        if f.get("policy") is not None and not same_policy(f["policy"], stored):
            self._answer(request, _diagnostics([Diagnostic(
                "E144", f"memory {self.name!r} uses policy {stored!r}, not {f['policy']!r}",
                None, f"memory {self.name}",
                hint="leave the policy out to attach, or drop the memory first")], ""))
            return None
        try:
            text, parsed = statements_of(f["text"])
            refuse(parsed, text, True)
        except TomError as err:
            self._answer(request, _diagnostics(err.diagnostics, err.text))
            return None
        request.parsed = parsed
        try:
            done = writes.recorded(self.db, self.name, request.writer, f["key"], parsed)
        except TomError as err:  # the key was used for another write (E146)
            self._answer(request, _diagnostics(err.diagnostics, text))
            return None
        if all(step is not None for step in done):
            left = writes.pending(parsed, done, None, writes.now())
            self._answer(request, _events(writes.merged(live, left, []), step=live.step))
            return None
        after = f.get("after_step") if not any(s is not None for s in done) else None
        if after is not None and after != live.step:
            self._answer(request, {"error": "stale", "expected": after, "actual": live.step,
                                   "message": str(StaleWrite(after, live.step))})
            return None
        left = writes.pending(parsed, done, live.checker.clock, writes.now())
        request.left = left
        policy = live.scenario.policy
        if any(isinstance(s, DECLARATIONS) and not isinstance(s, ast.Clock)
               for s in left.statements) or left.done:
            return True
        mark = live.checker.mark()
        try:
            events, _ = live.checker.add(left.statements, CHANGES, path="<apply>",
                                         canonical=True)
        except DiagnosticError as err:
            live.checker.reset(mark)
            self._answer(request, _diagnostics(err.diagnostics, text))
            return None
        if not all(live.engine.groupable(e, policy) for e in events):
            live.checker.reset(mark)
            return True
        request.fields["_mark"] = mark
        return False

    def _commit(self, group: list[Request], tries: int = 0) -> None:
        """Commit the checked requests of `group` in one transaction with their records,
        then answer them and take them off processing (only once the transaction's replies
        show that it is stored whole: an applier killed in between leaves them to the next,
        which answers them from their records); on a lost race (an embedded writer), check
        them again; on a failed statement (its group undone), commit each alone (only the
        failing one fails)."""
        if not group:
            return
        live = self.live
        statements = [s for r in group for s in r.left.statements]
        step = len(live.scenario.events) - sum(
            not isinstance(s, DECLARATIONS) for s in statements) + 1
        extra, answers = [], []
        for request in group:
            events = []
            for statement, indexes in zip(request.left.statements, request.left.records):
                at = 0
                if not isinstance(statement, DECLARATIONS):
                    at = step
                    events.append(live.scenario.events[step - 1])
                    step += 1
                extra += [writes.record(self.name, request.writer, request.fields["key"], i,
                                        at) for i in indexes]
            extra.append(writes.claim(self.name, request.writer, request.fields["key"],
                                      request.parsed, first=not request.left.done))
            answers.append((request, events))
        mark = group[0].fields["_mark"]
        base = live.engine.revision
        try:
            live.apply_together(statements, extra)
        except Behind:
            if tries >= MAX_TRIES:
                raise DatabaseUnavailable(f"memory {self.name}: writers outside the applier "
                                          "kept committing first") from None
            live.checker.reset(mark)
            live.catch_up()
            self._run(group, tries + 1)
        except Replaced:
            self._close()
            if self._attach() is None:
                for request in group:
                    self._answer(request, {"error": "replaced",
                                           "message": _replaced(self.name)})
            else:
                self._run(group)
        except DatabaseUnavailable as err:
            live.checker.reset(mark)
            live.catch_up()
            if len(group) == 1:
                self._answer(group[0], {"error": "unavailable", "message": str(err),
                                        "committed": []})
                return
            for request in group:
                self._run([request])
        else:
            self._send(self._replies(answers, base))
            for request in group:
                request.answered = True

    def _replies(self, answers: list[tuple[Request, list]], base: int) -> list[tuple]:
        """The commands answering each request with its events (lines as they will be
        numbered: the memory's revision after the group) and removing it from processing."""
        out = []
        revision = base
        for request, events in answers:
            numbered = []
            for statement in request.left.statements:
                revision += 1
                if not isinstance(statement, DECLARATIONS):
                    numbered.append(revision)
            body = _events([*[self.live.scenario.events[s - 1] for _, s in request.left.done
                              if s > 0], *events], lines=dict(zip([e.step for e in events],
                                                                  numbered)))
            body["replicas"] = self.live.engine.writer.replicas
            out += self._answer_commands(request, body)
        return out

    def _commit_alone(self, request: Request) -> None:
        """A request committed alone, as an embedded writer does (`writes.write`: whole
        when it can be)."""
        live, f = self.live, request.fields
        try:
            done = writes.recorded(self.db, self.name, request.writer, f["key"],
                                   request.parsed)
            events = writes.write(live, self.name, request.parsed, request.writer, f["key"],
                                  f.get("after_step"), done)
            body = _events(events, step=live.step)
            body["replicas"] = live.engine.attach_writer().replicas
        except (DiagnosticError, TomError) as err:
            body = _diagnostics(err.diagnostics, f["text"], err)
        except StaleWrite as err:
            body = {"error": "stale", "expected": err.expected, "actual": err.actual,
                    "message": str(err), "committed": _events(err.committed)["events"]}
        except Replaced:
            self._close()
            body = {"error": "replaced", "message": _replaced(self.name)}
        except DatabaseUnavailable as err:
            body = {"error": "unavailable", "message": str(err),
                    "committed": _events(err.committed)["events"]}
        self._answer(request, body)

    def _answer(self, request: Request, body: dict) -> None:
        self._send(self._answer_commands(request, body))
        request.answered = True

    def _send(self, commands: list[tuple]) -> None:
        """Run `commands` (replies, removals from processing) in one transaction."""
        pipe = self.db.redis.pipeline(transaction=True)
        for command in commands:
            pipe.execute_command(*command)
        pipe.execute()

    def _bury(self, raw: str, error: str, request: Optional[Request] = None) -> None:
        """Move the queued `raw` from processing to the dead-letter list with `error`, and
        answer its `request` with it (none when its reply list cannot be trusted)."""
        entry = {"id": dead_id(raw), "at": writes.now(), "error": _shown(error),
                 "bytes": len(raw.encode("utf-8", "surrogateescape")),
                 "request": _shown(raw[:PREVIEW])}
        commands = [("LPUSH", self.dead, json.dumps(entry)),
                    ("LTRIM", self.dead, 0, DEAD_KEEP - 1)]
        if request is not None and not request.answered:
            commands += self._answer_commands(request, {
                "error": "failed", "committed": [], "message":
                f"the applier could not apply this request ({error}); it is kept in the "
                f"memory's dead-letter list as {entry['id']} (`tomc memory requests "
                f"{self.name}`)"})
        else:
            commands.append(("LREM", self.processing, 1, raw))
        self._send(commands)
        if request is not None:
            request.answered = True

    def _note(self, error: str) -> None:
        """A dead-letter entry for what was dropped without being read."""
        entry = {"id": dead_id(error + writes.now()), "at": writes.now(), "error": error,
                 "bytes": 0, "request": ""}
        self._send([("LPUSH", self.dead, json.dumps(entry)),
                    ("LTRIM", self.dead, 0, DEAD_KEEP - 1)])

    def _answer_commands(self, request: Request, body: dict) -> list[tuple]:
        reply = request.fields["reply"]
        return [("RPUSH", reply, json.dumps(body)), ("EXPIRE", reply, REPLY_TTL_S),
                ("LREM", self.processing, 1, request.raw)]


def dead_id(raw: str) -> str:
    """The id of a request in the dead-letter list: a digest of what was queued."""
    return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _shown(text: str) -> str:
    """`text` as UTF-8 can carry it: bytes that were not UTF-8 (read as lone surrogates:
    tomc/runtime/connection.py) shown as `\\xNN`."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _replaced(name: str) -> str:
    return (f"memory {name!r} was dropped or created again since this session attached: "
            "attach again")


def _events(events: list, lines: Optional[dict] = None, step: int = 0) -> dict:
    """A reply's events (`lines`: step -> line, for events numbered at commit) and the
    memory's step after them (at least `step`)."""
    lines = lines or {}
    numbered = [dataclasses.replace(e, line=lines.get(e.step, e.line)) for e in events]
    return {"events": [{"step": e.step, "kind": e.kind, "text": e.text, "line": e.line,
                        "witnesses": sorted(e.witnesses)} for e in numbered],
            "whole": [event_codec.dump(e) for e in numbered],
            "step": max([e.step for e in events], default=step)}


def _diagnostics(diagnostics: list[Diagnostic], text: str, err=None) -> dict:
    committed = getattr(err, "committed", []) if err is not None else []
    return {"error": "diagnostics", "text": text, "committed": _events(committed)["events"],
            "message": "\n".join(d.render(text) for d in diagnostics),
            "diagnostics": [{"code": d.code, "message": d.message, "path": d.path,
                             "hint": d.hint,
                             "span": d.span.model_dump() if d.span else None}
                            for d in diagnostics]}


# ---------------------------------------------------------------- many memories


def serve_appliers(db: Database, stop: threading.Event, lease_s: float = LEASE_S,
                   workers: int = WORKERS, warm: int = WARM) -> None:
    """Apply the requests of every memory of `db` until `stop` is set: what `tomc serve`
    runs. One dispatcher waits on the wake set (a writer adds its memory's name there
    with each request) and hands each woken memory to a pool of `workers` threads, which
    drain its queue under its lease and give the lease back (`Applier.drain`): an idle
    memory costs nothing, whatever their number. The `warm` memories drained last keep
    their state attached between drains. Keeps the heartbeat `appliers_key()` alive, so
    clients know to submit (tomc/memory/submit.py), and sweeps the held leases every
    `lease_s` for one that lapsed (its applier, perhaps in another `tomc serve --db`
    process, stopped), waking its memory. Several processes may serve one server: a
    memory's lease decides which one applies it."""
    dispatcher = _Dispatcher(db, stop, lease_s, workers, warm)
    r = db.redis
    # Requests a killed applier left: one round trip for every memory (a thousand at start).
    names = sorted({catalog.memory_name(g) for g in db.graph_names()} - {None})
    pipe = r.pipeline(transaction=False)
    for name in names:
        pipe.exists(*waiting_keys(name))
    for name, queued in zip(names, pipe.execute()):
        if queued:
            dispatcher.wake(name)
    beat = swept = None  # when the heartbeat was last set, the leases last swept
    try:
        while not stop.is_set():
            try:
                now = time.monotonic()
                if beat is None or now - beat >= lease_s / 3:
                    r.set(appliers_key(), "1", ex=int(lease_s))
                    beat = now
                if swept is None or now - swept >= lease_s:
                    for name in r.zrangebyscore(appliers_key("held"), "-inf", time.time()):
                        r.zrem(appliers_key("held"), name)
                        dispatcher.wake(name)
                    swept = now
                woken = r.bzpopmin([appliers_key("wake")], 1)
            except redis.RedisError:  # the server restarting, a link lost: look again
                beat = swept = None
                stop.wait(1.0)
                continue
            if woken is not None and _queued(r, woken[1]):
                dispatcher.wake(woken[1])
    finally:
        try:
            r.delete(appliers_key())
        except redis.RedisError:
            pass  # gone with the server: it lapses by itself
        dispatcher.close()


def waiting_keys(name: str) -> tuple[str, str, str]:
    """The keys of memory `name` of which one exists while it has requests: the
    administrator's queue, processing, and the bell every writer rings after queueing
    (which the applier deletes once every writer's queue is empty)."""
    return memory_key(name, "queue"), memory_key(name, "processing"), memory_key(name, "bell")


def _queued(r: redis.Redis, name: str) -> bool:
    """Whether memory `name` has requests: anyone may add a name to the wake set (an agent's
    user too), so only a memory with requests is handed to the pool."""
    try:
        return bool(r.exists(*waiting_keys(name)))
    except redis.RedisError:
        return False  # lost with the link: the sweep, or the writer's next wake, brings it


class _Dispatcher:
    """The pool that drains woken memories, one drain per memory at a time: a memory woken
    while it drains is drained again after."""

    def __init__(self, db: Database, stop: threading.Event, lease_s: float, workers: int,
                 warm: int):
        self.db, self.stop, self.lease_s, self.warm = db, stop, lease_s, warm
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="applier")
        self.lock = threading.Lock()
        self.draining: dict[str, bool] = {}  # name -> woken again meanwhile
        self.waiting = 0  # drains handed to the pool and not started yet
        self.appliers: OrderedDict[str, Applier] = OrderedDict()  # the warm ones, LRU last

    def wake(self, name: str) -> None:
        """Drain memory `name` (again, after the drain running now); nothing once stopping
        (a drain's retry timer may fire after the pool is shut down)."""
        if self.stop.is_set():
            return
        with self.lock:
            if name in self.draining:
                self.draining[name] = True
                return
            self.draining[name] = False
            self.waiting += 1
        self.pool.submit(self._drain, name)

    def _linger(self) -> float:
        """How long a drained memory waits for its next request: LINGER_S while no other
        memory waits for a worker, else not at all."""
        return LINGER_S if self.waiting == 0 else 0.0

    def _drain(self, name: str) -> None:
        with self.lock:
            self.waiting -= 1
        again = False
        try:
            while not self.stop.is_set():
                # An agent's user may add any name to the wake set: only a memory with
                # requests gets an applier (no state kept for a name it makes up).
                if self.db.redis.exists(*waiting_keys(name)):
                    again = not self._applier(name).drain(self.stop, self._linger,
                                                          self._others_wait)
                with self.lock:
                    if again or not self.draining[name]:
                        # Ended here, under the lock: a wake after it starts a new drain.
                        self.draining.pop(name, None)
                        break
                    self.draining[name] = False
        except LeaseLost:
            pass  # another applier holds the memory: it applies what is queued
        except (DatabaseUnavailable, redis.RedisError) as err:
            log.warning("memory %s: lost the server while applying (%s); trying again",
                        name, err)
            self._again(name)
        except Exception:  # noqa: BLE001 (a bug: logged, and the memory tried again)
            log.exception("memory %s: the drain failed", name)
            self._again(name)
        finally:
            with self.lock:
                self.draining.pop(name, None)
        if again:  # its time slice ended with requests left: after the others waiting
            self.wake(name)

    def _others_wait(self) -> bool:
        return self.waiting > 0

    def _again(self, name: str) -> None:
        """Wake memory `name` again in a second (its requests wait in its queue)."""
        timer = threading.Timer(1.0, lambda: None if self.stop.is_set() else self.wake(name))
        timer.daemon = True
        timer.start()

    def _applier(self, name: str) -> Applier:
        """Memory `name`'s applier, kept warm; the least recently drained beyond `warm`
        (and not draining) closed."""
        with self.lock:
            applier = self.appliers.pop(name, None) or Applier(self.db, name, self.lease_s)
            self.appliers[name] = applier
            cold = [n for n in self.appliers if n not in self.draining][
                :max(0, len(self.appliers) - self.warm)]
            closing = [self.appliers.pop(n) for n in cold]
        for old in closing:
            old._close()
        return applier

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for applier in self.appliers.values():
            applier._close()


# How often `serve_cluster_appliers` lists a cluster's memories (a new one waits that long).
RESCAN_S = 2.0


def serve_cluster_appliers(db: Database, stop: threading.Event, lease_s: float = LEASE_S,
                           rescan_s: float = RESCAN_S) -> None:
    """What `tomc serve --db redis+cluster://...` runs until `stop` is set: an applier for
    every memory of the cluster, each in a thread of its own waiting on its memory's queue.

    A cluster has no server-wide key (a heartbeat, a wake set) that every memory's writers
    could reach in their memory's slot: writers see a memory's applier by its lease
    (tomc/memory/submit.py `serving`), and the memories are listed across the masters
    every `rescan_s` seconds (a new memory's first writes commit themselves until then).
    An applier whose shard fails over looks its master up again; one whose memory was
    dropped is stopped at the next listing."""
    running: dict[str, tuple[threading.Thread, threading.Event]] = {}
    while not stop.is_set():
        try:
            names = {memory_name(g) for g in db.graph_names()} - {None}
        except (DatabaseUnavailable, redis.RedisError):
            names = set(running)  # a master failing over: keep them, look again next round
        for name in set(running) - names:
            running.pop(name)[1].set()
        for name in sorted(names):
            if name in running and running[name][0].is_alive():
                continue
            try:
                applier = Applier(db, name, lease_s)
            except DatabaseUnavailable:
                continue  # its shard has no master yet: next round
            own = threading.Event()
            thread = threading.Thread(target=applier.run, args=(own,), daemon=True,
                                      name=f"applier {name}")
            running[name] = (thread, own)
            thread.start()
        stop.wait(rescan_s)
    for thread, own in running.values():
        own.set()
    for thread, _ in running.values():
        thread.join(timeout=lease_s)
