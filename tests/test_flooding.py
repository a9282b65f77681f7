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
