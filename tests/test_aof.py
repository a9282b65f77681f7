"""The AOF's log stays short while an embedded server runs (tomc/runtime/aof.py): a
restart replays a few hundred events, not the writes of hours (docs/falkordb.md 2.14)."""

from __future__ import annotations

import time

import redis

from tomc.runtime import aof
from tomc.runtime.server import EmbeddedServer


def _rewrites(client: redis.Redis) -> int:
    return client.info("persistence")["aof_rewrites"]


def test_the_log_bound_rewrites_the_aof_once_the_log_passes_its_size(tmp_path):
    server = EmbeddedServer(tmp_path / "data").start()
    bound = aof.LogBound(server.socket_path, server.secret, log_max=200_000, every_s=0.1)
    client = redis.Redis(unix_socket_path=str(server.socket_path), password=server.secret)
    try:
        assert server._log_bound is not None  # every embedded server has one
        before = _rewrites(client)
        pad = f"CYPHER pad='{'x' * 10_000}' CREATE (:T {{pad: $pad}})"  # 10 KB of log
        for _ in range(10):  # 100 KB of log: under the bound, no rewrite
            client.execute_command("GRAPH.QUERY", "g", pad)
        bound.start()
        time.sleep(0.5)
        assert _rewrites(client) == before
        for _ in range(20):  # past it
            client.execute_command("GRAPH.QUERY", "g", pad)
        deadline = time.monotonic() + 30
        while _rewrites(client) == before or aof.logged(client)[1]:
            assert time.monotonic() < deadline, "no rewrite past the bound"
            time.sleep(0.1)
        assert aof.logged(client)[0] < 200_000
    finally:
        bound.stop()
        client.close()
        server.stop()


def test_a_clean_stop_leaves_no_log_worth_replaying(tmp_path):
    server = EmbeddedServer(tmp_path / "data").start()
    client = redis.Redis(unix_socket_path=str(server.socket_path), password=server.secret)
    pad = "y" * 100_000
    for _ in range(12):  # 1.2 MB: past COMPACT_MIN, under LOG_MAX
        client.execute_command("GRAPH.QUERY", "g", f"CYPHER pad='{pad}' CREATE (:T {{pad: $pad}})")
    client.close()
    server.stop()
    server = EmbeddedServer(tmp_path / "data").start()
    client = redis.Redis(unix_socket_path=str(server.socket_path), password=server.secret)
    try:
        assert aof.logged(client)[0] < aof.COMPACT_MIN
        assert client.execute_command("GRAPH.RO_QUERY", "g", "MATCH (t:T) RETURN count(t)")[1] \
            == [[12]]
    finally:
        client.close()
        server.stop()


def test_after_a_rewrite_the_bound_rests_in_proportion_to_it(tmp_path):
    """A rewrite writes the whole snapshot (every memory of the server): the bound waits
    REST times as long as its last rewrite took before asking again, so on a large server
    rewriting never takes over."""
    server = EmbeddedServer(tmp_path / "data").start()
    bound = aof.LogBound(server.socket_path, server.secret, log_max=100_000, every_s=0.05,
                         rest=100_000).start()  # rests for hours after any rewrite
    client = redis.Redis(unix_socket_path=str(server.socket_path), password=server.secret)
    pad = f"CYPHER pad='{'z' * 10_000}' CREATE (:T {{pad: $pad}})"
    try:
        for _ in range(15):  # past the bound: one rewrite
            client.execute_command("GRAPH.QUERY", "g", pad)
        deadline = time.monotonic() + 30
        while bound.asked == 0 or aof.logged(client)[1]:
            assert time.monotonic() < deadline, "no rewrite past the bound"
            time.sleep(0.05)
        for _ in range(15):  # past it again, while it rests: none
            client.execute_command("GRAPH.QUERY", "g", pad)
        time.sleep(1)
        assert bound.asked == 1 and aof.logged(client)[0] > 100_000
    finally:
        bound.stop()
        client.close()
        server.stop()
