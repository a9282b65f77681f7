"""A server nobody can flood (issue 35 item 6): `tomc serve` bounds the server's memory
(`maxmemory` with `noeviction`), so a flood fills it to the bound and no further; a write
then gets a clear error (exit 3 from the CLI, DatabaseUnavailable from the API) and nothing
stored is dropped; once the flood is gone, writes go on. A real embedded FalkorDB of its
own, its appliers running."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tomc.api import Session
from tomc.memory.applier import serve_appliers
from tomc.runtime.keys import appliers_key
from tomc.runtime.connection import from_socket
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import EmbeddedServer

BOUND_MB = 96


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    server = EmbeddedServer(tmp_path_factory.mktemp("flood") / "data", max_memory_mb=BOUND_MB)
    server.start()
    db = from_socket(server.socket_path, password=server.secret)
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(db, stop, 2))
    thread.start()
    while not db.redis.exists(appliers_key()):
        time.sleep(0.05)
    try:
        yield db
    finally:
        stop.set()
        thread.join()
        db.close()
        server.stop()


def test_a_flood_fills_the_server_to_its_bound_and_a_write_then_says_so(bounded):
    db = bounded
    config = db.redis.config_get("maxmemory*")
    assert config["maxmemory"] == str(BOUND_MB * 2 ** 20)
    assert config["maxmemory-policy"] == "noeviction"
    with Session.attach("flooded", db=db) as s:
        s.apply("agents A, B\nrooms r\nA, B enter r\nA says x.y = 1")
        for size in (2 ** 20, 2 ** 14, 2 ** 8):  # what an agent's RPUSH on the wake list did
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                for _ in range(4 * BOUND_MB * 2 ** 20 // size):
                    db.redis.rpush("flood", "x" * size)
        assert db.redis.info("memory")["used_memory"] <= BOUND_MB * 2 ** 20 * 1.05
        with pytest.raises(DatabaseUnavailable, match="full|OOM"):
            s.apply("A says x.y = 2")
        assert s.believes("B", "x.y").values == ["1"]  # nothing stored was dropped
        db.redis.delete("flood")
        (event,) = s.apply("A says x.y = 3")
        assert event.step == 3 and s.believes("B", "x.y").values == ["3"]


def test_an_agents_queue_is_bounded_and_taken_in_turn_with_the_others(db, fresh):
    """Each agent's own queue (tomc/memory/submit.py `queue_of`): a client of tomc is told
    it is full before it pushes; what a user pushes past the bound anyway is dropped unread
    at the applier's next take, one dead-letter entry counting it; a batch takes a few of
    the agent's requests in turn with the administrator's (an `Applier` taken by hand on
    a server no `tomc serve` runs)."""
    from tomc.memory import acl, catalog, dead_letters, submit
    from tomc.memory.applier import AGENT_SLICE, Applier
    from tomc.runtime.keys import memory_key

    name = fresh("bounded_queue")
    with Session.attach(name, db=db) as s:
        s.apply("agents Maya, Billing")
    user, password = acl.grant(db, catalog.memory_graphs(name, ["Maya"]), "Maya")
    pool = db.redis.connection_pool
    maya = redis.Redis(connection_pool=redis.ConnectionPool(
        connection_class=pool.connection_class,
        **{**pool.connection_kwargs, "username": user, "password": password}))
    queue = submit.queue_of(name, user)
    db.redis.rpush(queue, *(f"junk {n}" for n in range(submit.AGENT_QUEUED)))
    fields = {"id": "x", "key": "k", "text": "Maya says a.b = 1", "after_step": None,
              "create": None, "policy": None, "incarnation": None,
              "reply": memory_key(name, "reply", user, "x"), "as": "Maya"}
    with pytest.raises(DatabaseUnavailable, match="queue of memory .* is full"):
        submit.exchange(maya, name, fields, False, "retry")
    assert db.redis.llen(queue) == submit.AGENT_QUEUED  # nothing queued
    db.redis.rpush(queue, *(f"more {n}" for n in range(500)))  # pushed past it anyway
    db.redis.rpush(memory_key(name, "queue"), *(f"admin {n}" for n in range(100)))
    applier = Applier(db, name)
    assert applier._hold()
    try:
        taken = applier._take(block=0)  # all junk: buried, none a request
        assert taken == []
        moved = db.redis.llen(memory_key(name, "processing"))
        dead = dead_letters.listed(db, name)
        assert any("500 entries pushed on" in d["error"] for d in dead)
        # the batch: AGENT_SLICE of hers, the rest the administrator's, all buried
        assert db.redis.llen(queue) == submit.AGENT_QUEUED - AGENT_SLICE
        assert db.redis.llen(memory_key(name, "queue")) == 100 - (64 - AGENT_SLICE)
        assert moved == 0
    finally:
        applier._release()
        maya.close()
        db.redis.delete(queue, memory_key(name, "queue"), memory_key(name, "bell"))


def test_a_dead_appliers_requests_go_back_whole_and_a_late_agents_queue_is_taken(db, fresh):
    """A request left in processing by an applier that died goes back to the head of the
    administrator's queue, in order, whoever sent it (where it came from is not to be read
    from its own text); and an agent granted after an applier last read the users has its
    queue taken too (the users are read again when a writer rang and a take found every
    queue it knows empty)."""
    import json

    from tomc.memory import acl, catalog, submit
    from tomc.memory.applier import Applier
    from tomc.runtime.keys import memory_key

    name = fresh("requeued")
    with Session.attach(name, db=db) as s:
        s.apply("agents Maya, Billing")
    user, _ = acl.grant(db, catalog.memory_graphs(name, ["Maya"]), "Maya")
    admin = json.dumps({"reply": memory_key(name, "reply", "r1")})
    hers = json.dumps({"reply": memory_key(name, "reply", user, "r2"), "as": "Maya"})
    processing = memory_key(name, "processing")
    db.redis.rpush(processing, admin, hers, "junk [[[")
    applier = Applier(db, name)
    try:
        assert applier._requeue() == 3
        assert db.redis.lrange(memory_key(name, "queue"), 0, -1) == [admin, hers, "junk [[["]
        assert db.redis.llen(submit.queue_of(name, user)) == 0
        db.redis.delete(memory_key(name, "queue"))
        assert applier._hold()
        assert applier._take(block=0) == []  # the users read and kept
        late, _ = acl.grant(db, catalog.memory_graphs(name, ["Billing"]), "Billing")
        db.redis.rpush(submit.queue_of(name, late), "junk from Billing's user")
        db.redis.rpush(memory_key(name, "bell"), "")  # as every writer rings
        assert applier._take(block=0) == []  # taken (and buried: not a request)
        assert db.redis.llen(submit.queue_of(name, late)) == 0
    finally:
        applier._release()
        db.redis.delete(memory_key(name, "queue"), processing, memory_key(name, "bell"))
