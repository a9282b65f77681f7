"""Writing through a memory's applier (tomc/memory/applier.py): the client side, light
enough for `tomc memory apply` to import without the compiler.

A request is one JSON document RPUSHed to its writer's queue of the memory (`queue_of`:
the administrator's `memory_key(NAME, 'queue')`, or an agent's own `memory_key(NAME,
'queue', USER)`, at most AGENT_QUEUED requests of AGENT_BYTES), then an empty entry on the
memory's bell (`memory_key(NAME, 'bell')`, which the applier waits on): {id, key, text,
after_step, create (a policy, or null: the memory must
exist), policy (the one the writer named, checked against the memory's), incarnation (the
id the writer attached to, or null), reply (the list the applier answers on), as (null, or
the agent whose own credential sent it: docs/security.md), wait_replicas (how many
replicas the writer's commit must reach: its `--wait-replicas`), mac}. `mac` signs the rest
(HMAC-SHA256, hex) with the password the writer's connection logged in with: the
administrator's, or the agent's (tomc/memory/acl.py); the applier refuses a request whose
signature is not right, so a request holds only what its sender may write. An agent's
reply list is `memory_key(NAME, 'reply', USER, ID)`, USER its FalkorDB user: the only
replies its user may pop. The name is put in the wake set too (`wake`), so `tomc serve` applies
the memory's requests. The reply, one JSON document, is either {events: [{step,
kind, text, line, witnesses}], step, replicas (how many replicas confirmed the commit, or
null when it waited for none)} or {error: diagnostics | stale | replaced |
no_memory | unavailable, message, ..., committed: [events]}.

On a cluster, every key a request touches is the memory's (one slot): nothing goes on the
wake set, and `tomc serve --db redis+cluster://...` keeps an applier waiting on every
memory's bell (tomc/memory/applier.py `serve_cluster_appliers`). An agent's read of its own
mind is a request too (tomc/memory/served_reads.py).

`serving` says whether a `tomc serve` runs appliers on this server (its heartbeat key). A
request no applier takes within the lease is withdrawn (LREM) and `NoApplier` raised: the
caller writes itself, with the same idempotency key; if it could not be withdrawn, an
applier holds it and its answer is awaited.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Optional

import redis

from tomc.runtime.connection import statement_timeout
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.keys import appliers_key, memory_key

# How long a reply may take while no applier holds the memory's lease (seconds).
GRACE_S = 15.0
# How long one BLPOP waits before the client looks whether an applier still serves.
POLL_S = 1.0
REPLY_TTL_S = 300
# The bounds of one agent's queue: how many requests may wait in it (the applier drops
# what its user pushes past that), and how large one may be (bytes of its JSON; the
# applier buries a larger one unread).
AGENT_QUEUED = 1000
AGENT_BYTES = 1024 * 1024
# A writer trusts what it last saw of `serving_key` (with its last commit) for this long:
# an applier that starts meanwhile finds the writer committing itself, which is safe (both
# commit under WATCH); one that stops costs a submit the grace above, so keep it short.
LOOKED_S = 1.0


class NoApplier(Exception):
    """No applier took the request; it was withdrawn, nothing of it applied."""


def serving_key(clustered_memory: Optional[str] = None) -> str:
    """The key that exists while appliers serve: the heartbeat `tomc serve` keeps alive
    for this server's memories; on a cluster (`clustered_memory`: the memory's name) there
    is no server-wide key, so the lease of that memory's applier."""
    if clustered_memory is not None:
        return memory_key(clustered_memory, "applier")
    return appliers_key()


def serving(client: redis.Redis, clustered_memory: Optional[str] = None) -> bool:
    """Whether appliers serve this server's memories (`serving_key`; `client`: the
    memory's shard on a cluster)."""
    return bool(client.exists(serving_key(clustered_memory)))


def wake(client, name: str) -> None:
    """Wake memory `name`'s applier (`client`: a client or pipeline of the server): its
    name in the wake set (`tomc:appliers:wake`, a sorted set by the time it was woken:
    waking a memory already woken adds nothing, and only ever moves it earlier, so a score
    someone else gave it cannot hold it back)."""
    client.zadd(appliers_key("wake"), {name: time.time()}, lt=True)


def signature(body: str, password: str) -> str:
    """The `mac` of a request's JSON `body` (without its mac) for a connection's password."""
    return hmac.new(password.encode("utf-8"), body.encode("utf-8"), hashlib.sha256).hexdigest()


def submit(client: redis.Redis, name: str, text: str, key: str,
           after_step: Optional[int] = None, create: Optional[str] = None,
           incarnation: Optional[str] = None, policy: Optional[str] = None,
           as_agent: Optional[str] = None, clustered: bool = False,
           wait_replicas: int = 0) -> dict:
    """Submit a write to memory `name` and wait for the applier's reply (a dict, above).
    `create`: the policy to create the memory with if there is none; `policy`: the policy
    the writer asked for, checked against an existing memory's; `as_agent`: the agent
    whose own user `client` is logged in as (`tomc token credential`), which may only
    speak as itself; `clustered`: `client` is the memory's shard of a cluster, where only
    the memory's own keys may be touched (no wake set: its applier waits on the queue
    itself); `wait_replicas`: the writer's, which the applier honours (or its own, if
    stronger). Raises NoApplier, DatabaseUnavailable (also when the commit reached fewer
    replicas than `wait_replicas`: it is on the master, but a failover could lose it)."""
    rid = uuid.uuid4().hex
    fields = {"id": rid, "key": key, "text": text, "after_step": after_step, "create": create,
              "policy": policy, "incarnation": incarnation,
              "reply": reply_list(client, name, rid, as_agent), "as": as_agent,
              "wait_replicas": wait_replicas}
    reply = exchange(client, name, fields, clustered,
                     f"retry with the same idempotency key ({key})")
    replicas = reply.get("replicas")  # None: nothing committed now (done before)
    if wait_replicas and replicas is not None and replicas < wait_replicas:
        raise DatabaseUnavailable(
            f"memory {name}: the applier committed step {reply.get('step')} on the master but "
            f"only {replicas} of {wait_replicas} replicas confirmed it (wait_replicas): it "
            "may be lost if the master fails now (docs/deployment.md)")
    return reply


def reply_list(client: redis.Redis, name: str, rid: str, as_agent: Optional[str]) -> str:
    """The reply list of request `rid`: an agent's is under its FalkorDB user's name (the
    only replies its user may pop), the administrator's under the memory's."""
    if as_agent is None:
        return memory_key(name, "reply", rid)
    return memory_key(name, "reply", client.connection_pool.connection_kwargs["username"], rid)


def queue_of(name: str, user: Optional[str]) -> str:
    """The queue of memory `name` a writer pushes its requests on: the administrator's
    (`user` None), or one of the agent's own (`user`: its FalkorDB user), so that what
    one agent queues never holds another writer's requests (tomc/memory/applier.py takes
    from each in turn)."""
    return memory_key(name, "queue") if user is None else memory_key(name, "queue", user)


def _room_in(client: redis.Redis, name: str, queue: str, agent: str, size: int) -> None:
    """Refuse (DatabaseUnavailable, nothing queued) an agent's request its queue has no
    room for (AGENT_QUEUED waiting: the applier drops what is pushed past it), or larger
    than AGENT_BYTES (the applier buries it unread)."""
    if size > AGENT_BYTES:
        raise DatabaseUnavailable(f"{agent}'s request to memory {name} holds {size:,} "
                                  f"bytes; an agent's request holds at most "
                                  f"{AGENT_BYTES:,}: nothing was queued")
    if client.llen(queue) >= AGENT_QUEUED:
        raise DatabaseUnavailable(f"{agent}'s queue of memory {name} is full "
                                  f"({AGENT_QUEUED:,} requests wait for its applier): "
                                  "nothing was queued; try again once they are applied")


def exchange(client: redis.Redis, name: str, fields: dict, clustered: bool,
             retry: str) -> dict:
    """Queue the request `fields` (its `reply` list among them) for memory `name`'s applier,
    signed with `client`'s password, and wait for the reply (a dict); `retry`: what the
    caller should do if the answer does not come (said in the error). Raises NoApplier,
    DatabaseUnavailable."""
    login = client.connection_pool.connection_kwargs
    body = json.dumps(fields)
    request = json.dumps({**fields, "mac": signature(body, login.get("password") or "")})
    queue, reply = queue_of(name, login["username"] if fields["as"] else None), fields["reply"]
    try:
        if fields["as"] is not None:
            _room_in(client, name, queue, fields["as"], len(request))
        pipe = client.pipeline(transaction=False)
        pipe.rpush(queue, request)
        pipe.rpush(memory_key(name, "bell"), "")
        if not clustered:
            wake(pipe, name)
        pipe.blpop([reply], POLL_S)
        answer = pipe.execute()[-1]
        unserved, waited, limit = 0.0, POLL_S, statement_timeout()
        while answer is None:
            if waited >= limit:
                raise DatabaseUnavailable(f"the applier of memory {name} did not answer in "
                                          f"{limit:.0f} s; {retry}")
            waited += POLL_S
            pipe = client.pipeline(transaction=False)
            pipe.exists(memory_key(name, "applier"), *([] if clustered else [appliers_key()]))
            if not clustered:
                # Woken again: a `tomc serve` killed after it took the wake and before it
                # took the request leaves no other trace of it (a lapsed lease is swept).
                wake(pipe, name)
            pipe.blpop([reply], POLL_S)
            alive, *_, answer = pipe.execute()
            unserved = 0.0 if alive else unserved + POLL_S
            if answer is None and unserved >= GRACE_S:
                if client.lrem(queue, 1, request):
                    raise NoApplier(f"no applier took the request to memory {name}")
                unserved = 0.0  # an applier holds it: its answer will come
    except (redis.ConnectionError, redis.TimeoutError) as err:
        raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}; {retry}") from None
    except redis.ResponseError as err:  # OOM: the server is full (maxmemory, noeviction)
        raise DatabaseUnavailable(f"FalkorDB refused the request: {err}; nothing was "
                                  "queued" + (" (the server is full: its maxmemory)" if
                                              isinstance(err, redis.exceptions.OutOfMemoryError)
                                              else "")) from None
    return json.loads(answer[1])
