"""Memories on a real FalkorDB cluster (docs/deployment.md): 3 masters and 3 replicas on
loopback, started from the embedded package's binaries (eval/local_cluster.py). The memory
CLI and API run unchanged on `redis+cluster://...`; memories spread over every shard; an
agent's user exists on every node; a master killed with -9 is replaced by its replica and,
with `wait_replicas=1`, no acknowledged event is lost or doubled."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
import redis
from redis.crc import key_slot

from conftest import REPO
from eval.local_cluster import LocalCluster, free_ports
from tomc.api import Session
from tomc.dsl.checker import check_text
from tomc.memory import catalog
from tomc.runtime.keys import memory_key
from tomc.memory.applier import LEASE_S, RESCAN_S
from tomc.memory import acl, submit
from tomc.runtime.connection import connect
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import find_binaries

from test_mcp import call, connected
from test_memory import STORY, WRITER, reference_versions, tomc, versions

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    nodes = LocalCluster(tmp_path_factory.mktemp("cluster"), masters=3, replicas=1).start()
    try:
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture
def cdb(cluster):
    with connect(cluster.url) as database:
        yield database


def test_the_memory_cli_runs_unchanged_on_a_cluster(cluster, cdb, tmp_path):
    url = cluster.url
    name = "cli_on_cluster"
    applied = tomc("memory", "apply", name, *STORY, "--wait-replicas", "1", url=url)
    assert applied.returncode == 0, applied.stderr
    asked = tomc("memory", "ask", name, "Maya believes refund.status", "--json", url=url)
    assert json.loads(asked.stdout)["answers"][0]["value"] == "approved"
    mine = tomc("memory", "ask", name, "Maya believes refund.status", "--as", "Maya", url=url)
    assert mine.returncode == 0, mine.stderr
    theirs = tomc("memory", "ask", name, "Finance believes refund.status", "--as", "Maya",
                  url=url)
    assert theirs.returncode == 4
    listed = json.loads(tomc("memory", "list", "--json", url=url).stdout)["memories"]
    assert name in [m["name"] for m in listed]
    exported = tomc("memory", "export", name, "-o", str(tmp_path / "m.tom"), url=url)
    assert exported.returncode == 0
    # The agent's user is on every node, masters and replicas, and saved nowhere twice.
    user = acl.user_name(catalog.memory_graphs(name), "Maya")
    assert all(node.acl_getuser(user) for node in cdb.nodes(replicas=True))
    assert len(cdb.nodes(replicas=True)) == 6
    assert tomc("memory", "grant", "--json", url=url).returncode == 0
    assert tomc("memory", "drop", name, url=url).returncode == 0
    assert not any(node.acl_getuser(user) for node in cdb.nodes(replicas=True))
    gone = tomc("memory", "ask", name, "Maya believes refund.status", url=url)
    assert gone.returncode == 2


def test_the_mcp_server_runs_unchanged_on_a_cluster(cluster):
    async def scenario():
        async with connected(None, "mcp_on_cluster", "--db", cluster.url,
                             "--wait-replicas", "1") as client:
            await call(client, "record", statements="agents Maya, Billing\nrooms chat")
            await call(client, "enter", agents=["Maya", "Billing"], room="chat")
            await call(client, "say", speaker="Billing", key="refund.status",
                       value="approved")
            answer = await call(client, "believes", chain="Maya", key="refund.status")
            assert "approved" in json.dumps(answer)
            await call(client, "plan_announcements", key="refund.status", speaker="Billing")
        async with connected(None, "mcp_on_cluster", "--db", cluster.url,
                             "--agent", "Maya") as maya:
            mine = await call(maya, "my_beliefs")
            assert "approved" in json.dumps(mine)
    asyncio.run(scenario())


def test_memories_spread_over_every_shard_and_are_listed_across_nodes(cluster, cdb):
    names = [f"spread{i}" for i in range(24)]
    for name in names:
        with Session.attach(name, db=cdb) as live:
            live.apply("agents A, B")
    masters = Counter(cluster.master_of(memory_key(n, "world")) for n in names)
    assert set(masters) == set(cluster.ports[:3])
    assert {m.name for m in catalog.stored(cdb)} >= set(names)
    for name in names:
        assert catalog.drop(cdb, name)


def test_simulations_fork_under_the_memorys_tag(cdb):
    with Session.attach("forked", db=cdb) as live:
        live.apply("agents A, B, C\nrooms q\nA, B enter q\nin q: k is in bag\nA exits q\n"
                   "B sets k.location = box")
        plan = live.plan_announcements("k", "B")
        assert plan.misinformed == ["A"]
    assert not [g for g in cdb.graph_names() if ":fork:" in g]
    catalog.drop(cdb, "forked")


def _copies(node) -> int:
    return node.info("commandstats").get("cmdstat_graph.COPY", {}).get("calls", 0)


def test_simulations_can_be_replayed_without_graph_copy(cluster, cdb):
    """docs/deployment.md, "Known limits": where a GRAPH.COPY could leave a node unable
    to restart (by default: a master with replicas, on any FalkorDB), a simulation copies
    nothing and replays the scenario; `simulate=replay` in the URL asks for it anywhere,
    `simulate=copy` copies anyway. Both ways plan alike."""
    story = ("agents A, B, C\nrooms q\nA, B enter q\nin q: k is in bag\nA exits q\n"
             "B sets k.location = box")
    plans = {}
    for how in ("copy", "replay"):
        with connect(f"{cluster.url}?simulate={how}") as db:
            with Session.attach(f"sim_{how}", db=db) as live:
                live.apply(story)
                node = db.shard(memory_key(f"sim_{how}")).redis
                copied = _copies(node)
                plans[how] = live.plan_announcements("k", "B")
                assert (_copies(node) > copied) == (how == "copy")
            catalog.drop(db, f"sim_{how}")
    assert plans["replay"] == plans["copy"] and plans["copy"].misinformed == ["A"]
    # A node whose AOF holds a GRAPH.COPY and writes to the copy shuts down when it restarts
    # (4.16.3 too: docs/falkordb.md check 10.2): rewritten, the AOFs hold none, so the
    # failover tests below can restart any node.
    nodes = cdb.nodes(replicas=True)
    for node in nodes:
        node.bgrewriteaof()
    deadline = time.monotonic() + 60
    while any(int(node.info("persistence")["aof_rewrite_in_progress"]) or
              int(node.info("persistence")["aof_rewrite_scheduled"]) for node in nodes):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    bad = tomc("memory", "list", url=f"{cluster.url}?simulate=sometimes")
    assert bad.returncode == 3 and "simulate" in bad.stderr


def test_eight_writers_on_a_cluster_one_history_equal_to_the_reference(cluster, cdb):
    name, per_writer = "crowd_on_cluster", 100
    with Session.attach(name, db=cdb) as setup:
        setup.apply("agents " + ", ".join(f"A{i}" for i in range(8)) + "\nrooms r0, r1")
    env = {**os.environ, "FALKORDB_URL": cluster.url}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, name, str(i), str(per_writer)],
                                env=env, stderr=subprocess.PIPE, text=True)
               for i in range(8)]
    for w in writers:
        assert w.wait(timeout=600) == 0, w.stderr.read()
        w.stderr.close()
    with Session.attach(name, db=cdb) as reader:
        events = reader.history()
        assert [e.step for e in events] == list(range(1, 8 * per_writer + 1))
        engine = versions(reader.view(), [(), *reader.scenario.chains()])
        text = reader.export()
    (scenario,) = check_text(text, "crowd.tom").scenarios
    assert engine == reference_versions(scenario)
    catalog.drop(cdb, name)


def test_an_agent_may_read_from_a_replica_with_stale_reads(cluster):
    with connect(cluster.url + "?stale_reads=yes&wait_replicas=1") as db:
        with Session.attach("stale_ok", db=db) as live:
            live.apply("\n".join(STORY))  # each commit waited for the replica
        with Session.attach("stale_ok", db=db, as_agent="Maya") as maya:
            assert "(replica)" in maya._reader.db.url
            assert maya.believes("Maya", "refund.status").values == ["approved"]
        catalog.drop(db, "stale_ok")


def _calls(node, command: str) -> int:
    return node.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0)


def _rpushes(node) -> int:
    return _calls(node, "rpush")


def test_tomc_serve_runs_an_applier_for_every_memory_of_the_cluster(cluster, cdb):
    """`tomc serve --db redis+cluster://...` starts no server: it keeps an applier waiting
    on the queue of every memory, on its shard; the CLI and the API then submit to it (an
    RPUSH on the memory's queue, on its master) instead of committing themselves."""
    names, masters = [], set()
    for i in range(60):  # memories on every shard
        name = f"served{i}"
        master = cluster.master_of(memory_key(name, "world"))
        if master not in masters:
            names.append(name)
            masters.add(master)
        if len(masters) == 3:
            break
    for name in names:
        with Session.attach(name, db=cdb) as live:  # made before the appliers run
            live.apply("\n".join(STORY))
    serve = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--db", cluster.url],
                             cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        shards = {name: cdb.shard(memory_key(name)) for name in names}
        deadline = time.monotonic() + 120
        while not all(submit.serving(shards[n].redis, n) for n in names):
            assert serve.poll() is None and time.monotonic() < deadline, serve.stderr.read()
            time.sleep(0.2)
        for n, name in enumerate(names):
            pushed = _rpushes(shards[name].redis)
            applied = tomc("memory", "apply", name, f"Finance sets order{n}.status = shipped",
                           url=cluster.url)
            assert applied.returncode == 0, applied.stderr
            assert f"memory {name} at step" in applied.stdout
            assert _rpushes(shards[name].redis) > pushed  # submitted to the applier
            with Session.attach(name, db=cluster.url) as live:
                pushed = _rpushes(shards[name].redis)
                (event,) = live.apply("Finance sets late.status = yes")
                assert event.step == live.step and _rpushes(shards[name].redis) > pushed
                assert live.truth(f"order{n}.status").values == ["shipped"]
        # A writer's wait_replicas travels with its request: the applier (waiting for one
        # replica by default on a cluster with replicas) WAITs for the stronger, and the
        # reply says how many replicas have the commit; asking for more than the shard has
        # is refused, although the commit is on the master.
        shard = shards[names[0]]
        waits = _calls(shard.redis, "wait")
        reply = submit.submit(shard.redis, names[0], "Finance sets durable.status = yes",
                              "durable-1", clustered=True, wait_replicas=1)
        assert reply.get("error") is None and reply["replicas"] == 1, reply
        assert _calls(shard.redis, "wait") > waits
        with connect(cluster.url + "?wait_replicas=2") as db, \
                Session.attach(names[0], db=db) as live:
            with pytest.raises(DatabaseUnavailable, match="only 1 of 2 replicas"):
                live.apply("Finance sets greedy.status = yes")
        with Session.attach(names[0], db=cdb) as again:
            assert again.truth("greedy.status").values == ["yes"]  # on the master
        # A memory made while it serves gets an applier at a next listing (every RESCAN_S);
        # a dropped one's applier stops there: its lease, renewed each second while it
        # runs, lapses and is not taken again.
        with Session.attach("served_late", db=cdb) as live:
            live.apply("\n".join(STORY))  # commits itself: no applier yet
        late = cdb.shard(memory_key("served_late"))
        deadline = time.monotonic() + 120
        while not submit.serving(late.redis, "served_late"):
            assert serve.poll() is None and time.monotonic() < deadline, serve.stderr.read()
            time.sleep(0.2)
        catalog.drop(cdb, "served_late")
        lease = memory_key("served_late", "applier")
        gone = None
        while gone is None or time.monotonic() - gone < 2 * RESCAN_S + LEASE_S:
            assert serve.poll() is None and time.monotonic() < deadline, serve.stderr.read()
            if late.redis.exists(lease):
                gone = None
            elif gone is None:
                gone = time.monotonic()
            time.sleep(0.2)
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        said = serve.stderr.read()
        serve.stderr.close()
    assert "each commit waits for 1 replica" in said, said
    for name in names:
        catalog.drop(cdb, name)
    mixed = tomc("serve", "--db", cluster.url, "--port", "7000", url=cluster.url)
    assert mixed.returncode == 2 and "--port" in mixed.stderr


def _write_until(stop: threading.Event, live, acked: list, errors: list) -> None:
    """Write `A sets k.s = vN` on session `live` until `stop`, a new value each try (a
    retry never doubles an event): (when, N) of each acknowledged in `acked`, each error
    in `errors` (the tests check them)."""
    n = 0
    while not stop.is_set():
        n += 1
        try:
            live.apply(f"A sets k.s = v{n}")
            acked.append((time.monotonic(), n))
        except Exception as err:  # noqa: BLE001 - each is checked by the caller
            errors.append(err)
            time.sleep(0.05)


def test_a_memory_resharded_under_writers_keeps_every_session(cluster):
    """An operator moves a live memory's slot to another master and back (SETSLOT
    IMPORTING/MIGRATING, MIGRATE a key at a time, SETSLOT NODE) while a writer commits on
    one long-lived session: no raw client error, nothing lost or doubled, writes resume
    within 5 s of each move, and every later call of the same sessions (the writer's, an
    agent's, a `tomc mcp` server's, the HTTP API's) and of the CLI succeeds."""
    from fastapi.testclient import TestClient

    from tomc.runtime import tokens
    from tomc.web.app import create_app

    name = "resharded"
    with Session.attach(name, db=cluster.url) as setup:
        setup.apply("agents A, B\nrooms r\nA, B enter r")
    slot = key_slot(memory_key(name).encode())
    home = cluster.master_of(memory_key(name))
    away = next(p for p in cluster.ports[:3] if p != home and p in cluster.processes)
    live = Session.attach(name, db=cluster.url)
    agent = Session.attach(name, db=cluster.url, as_agent="B")
    acked: list[tuple[float, int]] = []
    errors: list[Exception] = []
    stop = threading.Event()

    def write() -> None:
        _write_until(stop, live, acked, errors)

    moves: list[float] = []

    async def scenario() -> None:
        async with connected(None, name, "--db", cluster.url) as mcp:
            await call(mcp, "say", speaker="A", key="m.s", value="before")
            http.get(f"/memories/{name}/believes", headers=bearer,
                     params={"chain": "B", "key": "m.s"}).raise_for_status()
            for target in (away, home):
                await asyncio.to_thread(cluster.move_slot, slot, target, 1, 0.1)
                moves.append(time.monotonic())
                assert cluster.master_of(memory_key(name)) == target
                await call(mcp, "say", speaker="A", key="m.s", value=f"at{target}")
                assert agent.believes("B", "m.s").values == [f"at{target}"]
                said = http.post(f"/memories/{name}/events", headers=bearer,
                                 json={"statements": f"B says h.s = at{target}"})
                assert said.status_code == 200, said.text
                heard = http.get(f"/memories/{name}/believes", headers=bearer,
                                 params={"chain": "A", "key": "h.s"})
                assert heard.status_code == 200 and f"at{target}" in heard.text, heard.text
                applied = tomc("memory", "apply", name, f"B sets c{target}.s = yes",
                               url=cluster.url)
                assert applied.returncode == 0, applied.stderr
                while not acked or acked[-1][0] < moves[-1]:
                    assert time.monotonic() - moves[-1] < 5, errors[-3:]
                    await asyncio.sleep(0.05)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 20:
            assert writer.is_alive() and not errors, errors
            time.sleep(0.05)
        with connect(cluster.url) as db, TestClient(create_app(db)) as http:
            bearer = {"Authorization": f"Bearer {tokens.issue(db, name, None)}"}
            asyncio.run(scenario())
    finally:
        stop.set()
        writer.join()
    try:
        print(f"resharded: {len(acked)} events acknowledged, {len(errors)} calls failed")
        # Only ever the clear error, and only where resending was not safe.
        assert all(isinstance(e, DatabaseUnavailable) for e in errors), errors[:3]
        assert len(errors) <= 2, errors
        (done, n), = acked[-1:]
        live.apply(f"A sets k.s = last{n}")
        values = Counter(e.text.rsplit("= v", 1)[1] for e in live.history() if "= v" in e.text)
        assert all(values[str(n)] == 1 for _, n in acked) and max(values.values()) == 1
    finally:
        live.close()
        agent.close()
    with connect(cluster.url) as db:
        catalog.drop(db, name)


def test_a_memory_resharded_under_its_applier_loses_and_doubles_nothing(cluster):
    """The same move under `tomc serve --db`: a writer's session submits to the memory's
    applier throughout; its writes resume within 5 s of each move, and a request whose
    pipeline met the half-moved slot is a DatabaseUnavailable (retried with its idempotency
    key: never doubled), never a raw error."""
    name = "resharded_served"
    with Session.attach(name, db=cluster.url) as setup:
        setup.apply("agents A, B\nrooms r\nA, B enter r")
    slot = key_slot(memory_key(name).encode())
    home = cluster.master_of(memory_key(name))
    away = next(p for p in cluster.ports[:3] if p != home and p in cluster.processes)
    serve = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--db", cluster.url],
                             cwd=REPO, stderr=subprocess.PIPE, text=True)
    live = Session.attach(name, db=cluster.url)
    acked: list[tuple[float, int]] = []
    errors: list[Exception] = []
    stop = threading.Event()

    def write() -> None:
        _write_until(stop, live, acked, errors)

    writer = threading.Thread(target=write)
    try:
        with connect(cluster.url) as db:
            deadline = time.monotonic() + 120
            while not submit.serving(db.shard(memory_key(name)).redis, name):
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
            pushed = _rpushes(db.shard(memory_key(name)).redis)
        writer.start()
        while len(acked) < 10:
            assert writer.is_alive() and time.monotonic() < deadline, errors[-3:]
            time.sleep(0.05)
        for target in (away, home):
            cluster.move_slot(slot, target, 1, 0.1)
            moved = time.monotonic()
            while acked[-1][0] < moved:
                assert time.monotonic() - moved < 5, errors[-3:]
                time.sleep(0.05)
    finally:
        stop.set()
        if writer.is_alive():
            writer.join()
        live.close()
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        said = serve.stderr.read()
        serve.stderr.close()
    assert "Traceback" not in said, said
    print(f"resharded under its applier: {len(acked)} acknowledged, {len(errors)} failed")
    assert all(isinstance(e, DatabaseUnavailable) for e in errors), errors[:3]
    with connect(cluster.url) as db:
        assert _rpushes(db.shard(memory_key(name)).redis) > pushed  # through the applier
        with Session.attach(name, db=db) as reader:
            values = Counter(e.text.rsplit("= v", 1)[1] for e in reader.history()
                             if "= v" in e.text)
        assert all(values[str(n)] == 1 for _, n in acked) and max(values.values()) == 1
        catalog.drop(db, name)


def test_a_bad_cluster_url_or_a_dead_cluster_exits_3(cluster):
    dead = tomc("memory", "list", url="redis+cluster://127.0.0.1:1")
    assert dead.returncode == 3 and "Traceback" not in dead.stderr
    assert "cannot reach a FalkorDB cluster" in dead.stderr
    bad = tomc("memory", "list", url="redis+cluster://127.0.0.1:notaport")
    assert bad.returncode == 3 and "HOST:PORT" in bad.stderr
    run = tomc("run", str(REPO / "scenarios" / "sally_anne.tom"), url=cluster.url)
    assert run.returncode == 3 and "keeps memories only" in run.stderr


def test_a_master_killed_loses_no_acknowledged_event_with_wait(cluster):
    """kill -9 of the master of a memory while a writer commits with wait_replicas=1: the
    replica is promoted; every event whose apply returned is there exactly once; meanwhile
    the writer gets a clear DatabaseUnavailable (exit 3 in the CLI), never a raw error, and
    its session goes on on the promoted master."""
    url = cluster.url + "?wait_replicas=1"
    name = "failover"
    with connect(url) as db, Session.attach(name, db=db) as live:
        live.apply("agents A, B")
    master = cluster.master_of(memory_key(name, "world"))
    agent = Session.attach(name, db=url, as_agent="A")  # attached before the kill
    acked: list[int] = []
    errors: list[str] = []
    stop = threading.Event()

    def write() -> None:
        """One session throughout, as a long-lived process (`tomc mcp`) keeps it: after
        the failover its next calls reach the promoted master by themselves."""
        n = 0
        with connect(url) as db, Session.attach(name, db=db) as live:
            while not stop.is_set():
                n += 1  # a new value each try: a retry never doubles an event
                try:
                    live.apply(f"A sets k{n % 3}.s = v{n}")
                    acked.append(n)
                except DatabaseUnavailable as err:
                    errors.append(str(err))
                    time.sleep(0.1)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 30:
            time.sleep(0.05)
        assert agent.believes("A", "k0.s").values
        read_at = agent._reader.db.url
        killed_at, before = time.monotonic(), len(acked)
        cluster.kill(master)
        during = tomc("memory", "apply", name, "B sets z.s = during", url=cluster.url)
        promoted = cluster.wait_promoted(master)
        assert promoted is not None
        took = time.monotonic() - killed_at
        cluster.start_node(master)  # back, as a replica of the promoted node
        while len(acked) < before + 20:
            assert time.monotonic() - killed_at < 90, errors[-3:]
            time.sleep(0.05)
        # The agent's session follows the failover too: its next reads may fail with
        # DatabaseUnavailable, then reach the promoted master by themselves.
        while True:
            try:
                assert agent.believes("A", "k0.s").values
                break
            except DatabaseUnavailable:
                assert time.monotonic() - killed_at < 90
                time.sleep(0.1)
        assert agent._reader.db.url != read_at  # the new master
    finally:
        stop.set()
        writer.join()
        agent.close()
    print(f"failover: promoted in {took:.1f} s, {len(acked)} events acknowledged; "
          f"during: {during.returncode} {during.stderr.strip()}; errors: {errors[:3]}")
    assert during.returncode in (0, 3) and "Traceback" not in during.stderr
    assert errors and all("Traceback" not in e for e in errors)
    with connect(cluster.url) as db, Session.attach(name, db=db) as reader:
        values = Counter(e.text.rsplit("= v", 1)[1] for e in reader.history()
                         if "= v" in e.text)
    assert all(values[str(n)] == 1 for n in acked)  # present, and once
    assert max(values.values()) == 1


def test_tomc_serves_applier_resumes_on_the_promoted_master(cluster):
    """kill -9 of the master of a memory `tomc serve --db` applies for: once a replica is
    promoted, the memory's applier holds its lease there again and writes go through it."""
    url = cluster.url + "?wait_replicas=1"
    name = "served_failover"
    with connect(url) as db, Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
    serve = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--db", url],
                             cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        with connect(cluster.url) as db:
            deadline = time.monotonic() + 120
            while not submit.serving(db.shard(memory_key(name)).redis, name):
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        master = cluster.master_of(memory_key(name, "world"))
        cluster.kill(master)
        assert cluster.wait_promoted(master) is not None
        promoted_at = time.monotonic()
        cluster.start_node(master)  # back, as a replica of the promoted node
        with connect(cluster.url) as db:
            deadline = time.monotonic() + 120
            while True:
                # The lease the replica copied lapses within LEASE_S: one held after that
                # was taken or renewed on the promoted master by the applier.
                try:
                    shard = db.shard(memory_key(name))
                    if time.monotonic() - promoted_at > LEASE_S + 1 and \
                            submit.serving(shard.redis, name):
                        break
                except (DatabaseUnavailable, redis.RedisError):
                    pass
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.5)
            pushed = _rpushes(shard.redis)
            applied = tomc("memory", "apply", name, "Finance sets after.status = yes", url=url)
            assert applied.returncode == 0, applied.stderr
            assert _rpushes(shard.redis) > pushed  # submitted: the applier answered
        with Session.attach(name, db=cluster.url) as reader:
            assert reader.truth("after.status").values == ["yes"]
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        said = serve.stderr.read(); assert "Traceback" not in said, said
        serve.stderr.close()
    with connect(cluster.url) as db:
        catalog.drop(db, name)


def _documented() -> tuple[str, str]:
    """docs/deployment.md's blocks that start a cluster's nodes and use it."""
    text = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- not-run: ([^>]*) -->\n```sh\n(.*?)```", text, re.S)
    start = next(b for why, b in blocks if "test_the_documented_cluster_setup" in why)
    use = next(b for why, b in blocks if "tests/test_cluster.py runs it" in why)
    return start, use


def test_the_documented_cluster_setup_is_highly_available(tmp_path):
    """docs/deployment.md's nodes started as printed (on free ports, with the embedded
    package's module): the replicas sync although `default` has a password (masterauth),
    full coverage is off, agents' users are saved in the ACL files, and `tomc serve
    --check --db` says healthy; it refuses (exit 3, naming the node) full coverage turned
    on and a replica that cannot sync."""
    start, use = _documented()
    ports = free_ports(6)
    server, module, _ = find_binaries()

    def here(block: str) -> str:  # the doc's ports, free ones here
        for doc, port in zip(range(7001, 7007), ports):
            block = block.replace(str(doc), str(port))
        return block.replace("MODULE=/path/to/falkordb.so", f"MODULE={module}")

    env = {**os.environ, "PATH": f"{server.parent}:{os.path.dirname(sys.executable)}:"
                                 f"{os.environ['PATH']}"}
    env.pop("FALKORDB_URL", None)
    password = re.search(r"^PASSWORD=(\S+)", start, re.M).group(1)
    nodes = LocalCluster(tmp_path, masters=3, replicas=1, password=password)
    nodes.ports = ports
    try:
        started = subprocess.run(["bash", "-ec", here(start)], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        for port in ports:
            nodes._wait(lambda: nodes.client(port).ping())
        nodes.join()
        replicas = ports[3:]
        nodes._wait(lambda: all(nodes.client(p).info("replication")["master_link_status"]
                                == "up" for p in replicas))
        used = subprocess.run(["bash", "-ec", f"PASSWORD={password}\n" + here(use)],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert used.returncode == 0, used.stdout + used.stderr
        assert "healthy: the cluster" in used.stdout and "support" in used.stdout
        assert "approved" in used.stdout
        user = acl.user_name(catalog.memory_graphs("support"), "Maya")
        for port in ports:  # saved where a restarted node reads its users again
            assert user in (tmp_path / f"node-{port}" / "users.acl").read_text()
        url = "redis+cluster://default:{}@127.0.0.1:{}".format(password, ports[0])
        check = [sys.executable, "-m", "tomc", "serve", "--check", "--db", url]
        master = nodes.client(ports[0])
        master.config_set("cluster-require-full-coverage", "yes")
        covered = subprocess.run(check, cwd=REPO, env=env, capture_output=True, text=True)
        master.config_set("cluster-require-full-coverage", "no")
        assert covered.returncode == 3, covered.stdout + covered.stderr
        assert f"127.0.0.1:{ports[0]} has cluster-require-full-coverage yes" in covered.stderr
        # A replica without masterauth: its master answers its sync with -NOAUTH.
        replica = nodes.client(replicas[0])
        replica.config_set("masterauth", "")
        replica.client_kill_filter(_type="master")
        nodes._wait(lambda: replica.info("replication")["master_link_status"] != "up")
        unsynced = subprocess.run(check, cwd=REPO, env=env, capture_output=True, text=True)
        replica.config_set("masterauth", password)
        assert unsynced.returncode == 3, unsynced.stdout + unsynced.stderr
        assert f"replica 127.0.0.1:{replicas[0]}" in unsynced.stderr
        assert "has not synced" in unsynced.stderr and "Traceback" not in unsynced.stderr
    finally:
        for port in ports:
            try:
                nodes.client(port).shutdown(nosave=True)
            except redis.RedisError:
                pass


def test_an_agents_own_credential_reads_and_speaks_on_a_cluster(cluster, cdb):
    """`tomc token credential` on a cluster names every node; its user reads the slot map
    and finds the memory's shard; it reads its own mind and speaks through the memory's
    applier (`tomc serve --db`), exactly as on one server; what it may not do is refused
    clearly, not with MOVED text."""
    name = "own_on_cluster"
    with Session.attach(name, db=cdb) as live:
        live.apply("\n".join(STORY))
    made = tomc("token", "credential", name, "--agent", "Maya", "--json", url=cluster.url)
    assert made.returncode == 0, made.stderr
    own = json.loads(made.stdout)["url"]
    assert own.startswith("redis+cluster://tomc_")
    named = own.rsplit("@", 1)[1].split(",")  # every node that answers: masters, replicas
    masters = {f"{host}:{port}" for host, port in cdb.cluster.masters()}
    assert masters <= set(named) and len(named) > len(masters)
    unserved = tomc("memory", "apply", name, "Maya says refund.note = checked", "--as",
                    "Maya", url=own)
    assert unserved.returncode == 3 and "tomc serve" in unserved.stderr, unserved.stderr
    serve = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--db", cluster.url],
                             cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        shard = cdb.shard(memory_key(name))
        deadline = time.monotonic() + 120
        while not submit.serving(shard.redis, name):
            assert serve.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        asked = tomc("memory", "ask", name, "Maya believes refund.status", "--as", "Maya",
                     "--json", url=own)
        assert asked.returncode == 0, asked.stderr
        assert json.loads(asked.stdout)["answers"][0]["value"] == "approved"
        spoke = tomc("memory", "apply", name, "Maya says refund.note = checked", "--as",
                     "Maya", url=own)
        assert spoke.returncode == 0, spoke.stderr
        with Session.attach(name, db=own, as_agent="Maya") as maya:
            assert maya.believes("Maya", "refund.status").values == ["approved"]
            (event,) = maya.apply("Maya says refund.reason = late")
            assert "refund.reason" in event.text
        refused = tomc("memory", "apply", name, "Billing says refund.note = no", "--as",
                       "Maya", url=own)
        assert refused.returncode == 4 and "access denied" in refused.stderr, refused.stderr
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        said = serve.stderr.read()
        serve.stderr.close()
    assert "Traceback" not in said, said
    with Session.attach(name, db=cdb) as reader:
        assert reader.believes("Billing", "refund.note").values == ["checked"]
        assert reader.believes("Billing", "refund.reason").values == ["late"]
    catalog.drop(cdb, name)
