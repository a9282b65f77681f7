"""One applier per memory (tomc/memory/applier.py), idempotency keys and incarnations
(docs/storage.md, "The applier", "Retries", "Incarnations"): writers submit to the applier
`tomc serve` runs and get their steps back, no writer starves, a killed applier loses no
acknowledged event and the next resumes, a retried write never applies twice, and a
session attached to a dropped memory never writes into its successor. A real FalkorDB of
its own (appliers serve every memory of a server), writers and appliers as separate
processes where a kill matters."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timezone

import pytest

from conftest import REPO
from tomc.api import Session, TomError
from tomc.memory import catalog, dead_letters
from tomc.memory.applier import Applier, serve_appliers
from tomc.runtime.keys import appliers_key, memory_key
from tomc.memory import submit
from tomc.runtime.connection import connect
from tomc.runtime.errors import DatabaseUnavailable, StaleWrite
from tomc.runtime.executor import Executor
from tomc.runtime.transactions import Writer

LEASE_S = 2
SETUP = "agents A, B, C\nrooms r, s\nA, B, C enter r"
APPLIER = ("import sys, threading\n"
           "from tomc.runtime.connection import from_url\n"
           "from tomc.memory.applier import serve_appliers\n"
           f"serve_appliers(from_url(sys.argv[1]), threading.Event(), {LEASE_S})\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A FalkorDB of this module's own."""
    with connect(None, tmp_path_factory.mktemp("applier") / "data") as db:
        yield db


@pytest.fixture
def appliers(server):
    """Appliers serving `server`, in a thread, for one test."""
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(server, stop, LEASE_S))
    thread.start()
    while not server.redis.exists(appliers_key()):
        time.sleep(0.05)
    yield server
    stop.set()
    thread.join()


def _applier_process(url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", APPLIER, url], env=env)


def _fresh(db, name: str) -> None:
    catalog.drop(db, name)
    with Session.attach(name, db=db) as s:
        s.apply(SETUP)


def test_writes_go_through_the_applier_and_get_their_steps(appliers):
    _fresh(appliers, "ap_basic")
    with Session.attach("ap_basic", db=appliers) as s:
        appliers.redis.config_resetstat()
        events = s.apply("A says x.y = 1\nB tells C x.z = 2")
        assert [e.step for e in events] == [2, 3]
        # Its applier ran: it takes requests with LMOVE, a writer committing itself never.
        assert appliers.redis.info("commandstats")["cmdstat_lmove"]["calls"] > 0
        assert s.believes("C", "x.z").values == ["2"]
        with pytest.raises(StaleWrite):
            s.apply("A says x.y = 3", after_step=1)
        with pytest.raises(TomError) as bad:
            s.apply("A tells Zed x.y = 1")
        assert bad.value.diagnostics[0].code == "E101"
        assert s.step == 3


def test_a_malformed_request_is_dropped_and_the_applier_goes_on(appliers):
    """docs/security.md: an agent's user may push any text on its memory's queue; the
    applier drops what is not a request (no JSON, not an object, a field of the wrong type,
    a reply list outside the memory's) without answering it, and serves the next."""
    _fresh(appliers, "ap_junk")
    queue, elsewhere = memory_key("ap_junk", "queue"), memory_key("ap_other", "queue")
    signed = {"id": "1", "key": "k", "text": "A says x.y = 1", "after_step": None,
              "create": None, "policy": None, "incarnation": None, "as": None, "mac": "x"}
    junk = ["not json", "[1, 2]", json.dumps({**signed, "text": 5,
                                               "reply": memory_key("ap_junk", "reply", "1")}),
            json.dumps({**signed, "reply": elsewhere})]
    appliers.redis.rpush(queue, *junk)
    submit.wake(appliers.redis, "ap_junk")
    with Session.attach("ap_junk", db=appliers) as s:
        (event,) = s.apply("A says x.y = 2")
        assert event.step == 2 and s.believes("B", "x.y").values == ["2"]
    assert not appliers.redis.exists(elsewhere, memory_key("ap_junk", "processing"))
    assert appliers.redis.llen(queue) == 0


def test_a_claim_without_a_time_takes_the_time_it_is_applied_at(appliers):
    _fresh(appliers, "ap_claim")
    with Session.attach("ap_claim", db=appliers) as s:
        before = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
        (event,) = s.apply("claim x.y = 1 from A")
        after = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
        assert before <= event.time <= after
        assert "clock " in s.export()


@pytest.mark.parametrize("served", [True, False], ids=["applier", "embedded"])
def test_a_retry_with_the_same_key_returns_the_original_steps(server, served, request):
    if served:
        request.getfixturevalue("appliers")
    name = f"ap_retry_{served}"
    _fresh(server, name)
    with Session.attach(name, db=server) as s:
        first = s.apply("A says x.y = 1\nclaim x.z = 2 from B", idempotency_key="order-1")
        again = s.apply("A says x.y = 1\nclaim x.z = 2 from B", idempotency_key="order-1")
        assert [e.step for e in again] == [e.step for e in first] == [2, 3]
        assert s.step == 3
        assert s.apply("A says x.y = 1", idempotency_key="order-2")[0].step == 4


def test_a_retry_after_a_killed_writer_applies_only_what_did_not_commit(server):
    _fresh(server, "ap_killed")
    # A declaration first: the batch commits statement by statement (docs/storage.md, "Limits")
    batch = "rooms q\n" + "\n".join(f"A says k{i}.v = {i}" for i in range(60))
    code = ("import sys\nfrom tomc.api import Session\n"
            "with Session.attach('ap_killed', db=sys.argv[1]) as s:\n"
            "    s.apply(sys.stdin.read(), idempotency_key='batch-1')\n")
    writer = subprocess.Popen([sys.executable, "-c", code, server.url], stdin=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, text=True)
    writer.stdin.write(batch)
    writer.stdin.close()
    deadline = time.monotonic() + 120
    while catalog.read(server, "ap_killed").step < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    cut = catalog.read(server, "ap_killed").step
    assert 5 <= cut < 61  # killed mid-batch
    with Session.attach("ap_killed", db=server) as s:
        events = s.apply(batch, idempotency_key="batch-1")
        assert [e.step for e in events] == list(range(2, 62))
        texts = Counter(e.text for e in s.history())
    assert all(texts[f"A says k{i}.v = {i}"] == 1 for i in range(60))


def test_a_failed_batch_says_which_statements_committed(server, monkeypatch):
    _fresh(server, "ap_partial")
    batch = "rooms q\n" + "\n".join(f"A says k{i}.v = {i}" for i in range(20))  # in parts
    s = Session.attach("ap_partial", db=server)
    commit = Writer.commit

    def then_dropped(self, *args, **kwargs):
        """A commit, then (once step 4 is in) the memory dropped by another client: the
        drop comes midway however fast the batch runs (a racing thread once came late)."""
        replies = commit(self, *args, **kwargs)
        stored = catalog.read(server, "ap_partial")
        if stored is not None and stored.step >= 4:
            catalog.drop(server, "ap_partial")
        return replies

    monkeypatch.setattr(Writer, "commit", then_dropped)
    with pytest.raises(TomError) as cut:
        s.apply(batch)
    monkeypatch.undo()
    s.close()
    assert cut.value.diagnostics[0].code == "E145"
    steps = [e.step for e in cut.value.committed]
    assert len(steps) >= 3 and steps == list(range(2, 2 + len(steps)))


@pytest.mark.parametrize("served", [True, False], ids=["applier", "embedded"])
def test_a_reader_sees_a_request_whole_or_not_at_all(server, served, request):
    """Each request of two events moves the revision by two in one transaction: a reader
    polling it never sees the odd revision between them (one per statement did)."""
    if served:
        request.getfixturevalue("appliers")
    name = f"ap_whole_{served}"
    _fresh(server, name)
    revision = catalog.memory_graphs(name).revision_key
    base = int(server.redis.get(revision))
    seen: set[int] = set()
    stop = threading.Event()

    def poll() -> None:
        reader = server.redis.connection_pool.get_connection("GET")
        try:
            while True:  # one more look after the writer is done: the final revision
                done = stop.is_set()
                reader.send_command("GET", revision)
                seen.add(int(reader.read_response()))
                if done:
                    break
        finally:
            server.redis.connection_pool.release(reader)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        with Session.attach(name, db=server) as s:
            for n in range(30):
                s.apply(f"A says x{n}.v = 1\nB says x{n}.w = 2")
    finally:
        stop.set()
        poller.join()
    assert {(r - base) % 2 for r in seen} == {0}, sorted(seen)
    assert max(seen) == base + 60


def test_a_session_reading_meanwhile_sees_each_request_whole(appliers):
    """The graphs' side of the test above: a session reading the history while writers'
    requests of two events commit in groups never holds one event of a request without the
    other. A read sent alone ran on a FalkorDB worker thread, between two statements of a
    group's transaction (docs/falkordb.md check 6.20); tomc's reads run inside MULTI/EXEC."""
    _fresh(appliers, "ap_read_whole")
    torn: list[str] = []
    reads: list[int] = []  # the events each read saw: a reader that died saw nothing
    stop = threading.Event()

    def write(w: int) -> None:
        with Session.attach("ap_read_whole", db=appliers) as s:
            for n in range(25):
                s.apply(f"A says w{w}.n{n} = 1\nB says w{w}.n{n} = 2")

    def read() -> None:
        with Session.attach("ap_read_whole", db=appliers) as s:
            while not stop.is_set():
                history = s.history()[3:]
                reads.append(len(history))
                keys = Counter(e.text.split()[2] for e in history)
                torn.extend(k for k, c in keys.items() if c != 2)

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    reader.join()
    assert any(0 < n < 200 for n in reads)  # it read while the writers wrote
    assert not torn


@pytest.mark.parametrize("served", [True, False], ids=["applier", "embedded"])
def test_a_session_of_a_dropped_memory_never_writes_into_the_new_one(server, served, request):
    if served:
        request.getfixturevalue("appliers")
    name = f"ap_reborn_{served}"
    _fresh(server, name)
    old = Session.attach(name, db=server)
    catalog.drop(server, name)
    with Session.attach(name, db=server) as new:
        new.apply("agents A")
        for call in (lambda: old.apply("A enters r"), lambda: old.ask("A believes x.y")):
            with pytest.raises(TomError) as replaced:
                call()
            assert replaced.value.diagnostics[0].code == "E145"
        new.refresh()
        assert new.step == 0 and new.scenario.agents == ["A"]
    old.close()


WRITER = ("import sys, time\nfrom tomc.api import Session\n"
          "url, me, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])\n"
          "with Session.attach('ap_fair', db=url) as s:\n"
          "    s.apply(f'{me} enters r')\n"
          "    r = s._live.engine.db.redis\n"
          "    r.rpush('test:fair:ready', me)\n"
          "    while not r.exists('test:fair:start'): time.sleep(0.01)\n"
          "    start, n = float(r.get('test:fair:start')), 0\n"
          "    while time.time() < start: time.sleep(0.001)\n"
          "    while time.time() < start + seconds:\n"
          "        s.apply(f'{me} says {me}.n = {n}', idempotency_key=f'{me}-{n}')\n"
          "        n += 1\n"
          "    print(n)\n")


@pytest.mark.slow
def test_eight_writers_for_a_fixed_time_each_commit_within_twice_the_others(appliers):
    catalog.drop(appliers, "ap_fair")
    appliers.redis.delete("test:fair:ready", "test:fair:start")
    agents = [f"W{i}" for i in range(8)]
    with Session.attach("ap_fair", db=appliers) as s:
        s.apply(f"agents {', '.join(agents)}\nrooms r")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, appliers.url, a, "10"],
                                env=env, stdout=subprocess.PIPE, text=True) for a in agents]
    deadline = time.monotonic() + 240
    while appliers.redis.llen("test:fair:ready") < len(agents):  # all attached
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
        time.sleep(0.1)
    appliers.redis.set("test:fair:start", time.time() + 0.5)
    counts = [int(w.communicate(timeout=300)[0]) for w in writers]
    appliers.redis.delete("test:fair:ready", "test:fair:start")
    assert min(counts) > 0 and max(counts) <= 2 * min(counts), counts
    with Session.attach("ap_fair", db=appliers) as s:
        texts = Counter(e.text for e in s.history())
    assert max(texts.values()) == 1  # no event twice
    assert sum(texts[f"{a} says {a}.n = {n}"] for a, c in zip(agents, counts)
               for n in range(c)) == sum(counts)


@pytest.mark.slow
def test_a_killed_applier_loses_no_acknowledged_event_and_the_next_resumes(server):
    catalog.drop(server, "ap_kill")
    with Session.attach("ap_kill", db=server) as s:
        s.apply(SETUP)
    applier = _applier_process(server.url)
    acknowledged: list[list[int]] = [[] for _ in range(4)]
    torn: list[str] = []

    def write(w: int) -> None:
        with Session.attach("ap_kill", db=server) as s:
            for n in range(40):
                # two events per request: a reader sees both or neither
                s.apply(f"A says w{w}.n{n} = 1\nB says w{w}.n{n} = 2",
                        idempotency_key=f"w{w}-{n}")
                acknowledged[w].append(n)

    def read(stop: threading.Event) -> None:
        with Session.attach("ap_kill", db=server) as s:
            while not stop.is_set():
                keys = Counter(e.text.split()[2] for e in s.history()[3:])
                torn.extend(k for k, c in keys.items() if c != 2)

    while not server.redis.exists(appliers_key()):
        time.sleep(0.05)
    stop = threading.Event()
    reader = threading.Thread(target=read, args=(stop,))
    reader.start()
    writers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in writers:
        t.start()
    while catalog.read(server, "ap_kill").step < 40:
        time.sleep(0.01)
    applier.send_signal(signal.SIGKILL)  # mid-batch: four writers keep it busy
    applier.wait()
    replacement = _applier_process(server.url)
    try:
        for t in writers:
            t.join(timeout=300)
        stop.set()
        reader.join()
    finally:
        replacement.send_signal(signal.SIGKILL)
        replacement.wait()
    assert all(a == list(range(40)) for a in acknowledged)
    with Session.attach("ap_kill", db=server) as s:
        texts = Counter(e.text for e in s.history())
    for w in range(4):
        for n in range(40):
            assert texts[f"A says w{w}.n{n} = 1"] == 1 and texts[f"B says w{w}.n{n} = 2"] == 1
    assert not torn


# ---------------------------------------------------------------- no request stops it


def _failing_world_statement(monkeypatch, name: str, times: int) -> list[int]:
    """Make the world graph's statement of memory `name`'s next `times` events fail at run
    time inside their transaction (FalkorDB rolls that one statement back; MULTI/EXEC runs
    the others); returns the list the count of failures so far is appended to."""
    failed: list[int] = []
    command = Executor.command

    def failing(self, graphs, statement):
        found = command(self, graphs, statement)
        if len(failed) < times and graphs.world == catalog.memory_graphs(name).world \
                and found[1] == graphs.world and statement.template != "declare.cypher":
            failed.append(1)
            return ("GRAPH.QUERY", found[1], "CREATE (n:Broken) SET n.v = [1] + {a: 1}")
        return found

    monkeypatch.setattr(Executor, "command", failing)
    return failed


@pytest.mark.parametrize("served", [True, False], ids=["applier", "embedded"])
def test_an_event_a_statement_failure_undoes_is_never_acknowledged_and_a_retry_applies_it(
        server, served, request, monkeypatch):
    """Issue 35 item 3: the writer is told the write failed (not exit 0), nothing of it is
    stored, its idempotency records are gone, and the retry with the same key applies it
    once."""
    if served:
        request.getfixturevalue("appliers")
    name = f"ap_undone_{served}"
    _fresh(server, name)
    failed = _failing_world_statement(monkeypatch, name, 1)
    with Session.attach(name, db=server) as s:
        with pytest.raises(DatabaseUnavailable) as err:
            s.apply("A says x.y = 1\nB says x.z = 2", idempotency_key="once")
        assert failed and "undone" in str(err.value)
        assert s.step == 1 and s.believes("C", "x.y").values == []
        keys = server.redis.hgetall(memory_key(name, "keys"))
        assert not [f for f in keys if "once" in f], keys
        events = s.apply("A says x.y = 1\nB says x.z = 2", idempotency_key="once")
        assert [e.step for e in events] == [2, 3]
        again = s.apply("A says x.y = 1\nB says x.z = 2", idempotency_key="once")
        assert [e.step for e in again] == [2, 3] and s.step == 3
        assert s.believes("C", "x.y").values == ["1"]


@pytest.mark.parametrize("served", [True, False], ids=["applier", "embedded"])
def test_a_key_used_again_for_another_write_is_refused(server, served, request):
    """Issue 35 item 4: a key belongs to the write first sent with it (E146), never
    answered with that write's steps."""
    if served:
        request.getfixturevalue("appliers")
    name = f"ap_reuse_{served}"
    _fresh(server, name)
    with Session.attach(name, db=server) as s:
        s.apply("A says x.y = 1", idempotency_key="nightly-sync-1")
        with pytest.raises(TomError) as err:
            s.apply("B says x.y = 2", idempotency_key="nightly-sync-1")
        assert err.value.diagnostics[0].code == "E146"
        assert s.step == 2 and s.believes("C", "x.y").values == ["1"]


def _queue(db, name: str, *raws) -> None:
    db.redis.rpush(memory_key(name, "queue"), *raws)
    submit.wake(db.redis, name)


def test_no_queued_entry_stops_the_applier_and_each_goes_to_the_dead_letter_list(appliers):
    """Issue 35 item 2: an array nested 100,000 deep (RecursionError), bytes that are not
    UTF-8, a text nested deep, ... each lands in the dead-letter list (`tomc memory
    requests` lists and drops them) and the applier serves the next write."""
    name = "ap_poison"
    _fresh(appliers, name)
    deep = "[" * 100_000 + "]" * 100_000
    appliers.redis.rpush(memory_key(name, "queue"), b"\xff\xfe not utf-8 \xc3")
    _queue(appliers, name, deep, json.dumps({"id": 1}), "{" * 5000)
    with Session.attach(name, db=appliers) as s:
        (event,) = s.apply("A says x.y = 2")
        assert event.step == 2 and s.believes("B", "x.y").values == ["2"]
    assert appliers.redis.llen(memory_key(name, "processing")) == 0
    dead = dead_letters.listed(appliers, name)
    assert len(dead) == 4 and all(e["error"].startswith("not a request") for e in dead)
    assert {e["bytes"] for e in dead} >= {len(deep)}
    url = appliers.url
    listed = subprocess.run([sys.executable, "-m", "tomc", "memory", "requests", name,
                             "--db", url, "--json"], capture_output=True, text=True,
                            cwd=str(REPO), timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [e["id"] for e in json.loads(listed.stdout)["requests"]] == [e["id"] for e in dead]
    wrong = subprocess.run([sys.executable, "-m", "tomc", "memory", "requests", name,
                            "--db", url, "--drop", "nosuchid"], capture_output=True,
                           text=True, cwd=str(REPO), timeout=120)
    assert wrong.returncode == 2 and "nosuchid" in wrong.stderr + wrong.stdout
    dropped = subprocess.run([sys.executable, "-m", "tomc", "memory", "requests", name,
                              "--db", url, "--drop", dead[0]["id"], "--json"],
                             capture_output=True, text=True, cwd=str(REPO), timeout=120)
    assert json.loads(dropped.stdout)["dropped"] == [dead[0]["id"]]
    assert len(dead_letters.listed(appliers, name)) == 3
    missing = subprocess.run([sys.executable, "-m", "tomc", "memory", "requests", "ap_nosuch",
                              "--db", url], capture_output=True, text=True, cwd=str(REPO),
                             timeout=120)
    assert missing.returncode == 2 and "no memory called 'ap_nosuch'" in missing.stderr


def test_a_request_the_applier_fails_on_is_answered_buried_and_the_next_applied(
        appliers, monkeypatch):
    """A failure the applier does not expect while applying one request (here: checking
    it raises) answers that request with the error, buries it, and applies the others of
    its batch."""
    name = "ap_bug"
    _fresh(appliers, name)
    check = Applier._check

    def buggy(self, request):
        if "boom" in request.fields["text"]:
            raise RecursionError("maximum recursion depth exceeded")
        return check(self, request)

    monkeypatch.setattr(Applier, "_check", buggy)
    with Session.attach(name, db=appliers) as s:
        with pytest.raises(DatabaseUnavailable) as err:
            s.apply("A says boom.x = 1")
        assert "dead-letter" in str(err.value)
        (event,) = s.apply("A says x.y = 3")
        assert event.step == 2
    (entry,) = dead_letters.listed(appliers, name)
    assert entry["error"].startswith("RecursionError") and "boom" in entry["request"]


# ---------------------------------------------------------------- many memories


@pytest.mark.slow
def test_sixty_memories_are_served_and_idle_they_cost_almost_nothing(appliers):
    """Issue 35 item 7: one dispatcher and a bounded pool serve every memory (the 50th
    memory written no longer hangs), and idle memories send nothing: the server runs a
    handful of commands a second in all (the heartbeat, the wake list's wait, the sweep of
    leases), not dozens per memory."""
    names = [f"ap_many_{i}" for i in range(60)]
    for name in names:
        catalog.drop(appliers, name)
    for i, name in enumerate(names):
        reply = submit.submit(appliers.redis, name, SETUP + f"\nA says n.v = {i}",
                              f"k{i}", create="default")
        assert reply.get("error") is None and reply["step"] == 2, reply
    time.sleep(1)  # the last drain's linger
    assert not any(appliers.redis.exists(memory_key(n, "applier")) for n in names)
    appliers.redis.config_resetstat()
    time.sleep(3)
    calls = sum(s["calls"] for s in appliers.redis.info("commandstats").values())
    assert calls < 40, appliers.redis.info("commandstats")
    for name in names:
        catalog.drop(appliers, name)


def test_a_lease_that_lapsed_with_its_applier_is_swept_and_its_memory_served(appliers):
    """A memory whose applier died holding its lease (another `tomc serve --db` process
    killed mid-batch): its requests wait until the lease lapses, then the sweep of held
    leases wakes the memory and it is applied; nothing else wakes it."""
    name = "ap_swept"
    _fresh(appliers, name)
    r = appliers.redis
    while r.exists(memory_key(name, "applier")):  # the drain of `_fresh` lingering
        time.sleep(0.05)
    r.set(memory_key(name, "applier"), "a-dead-process", ex=LEASE_S)
    r.zadd(appliers_key("held"), {name: time.time() + LEASE_S})
    started = time.monotonic()
    reply = submit.submit(r, name, "A says swept.v = 1", "sweep-1")
    assert reply.get("error") is None and reply["step"] == 2
    assert time.monotonic() - started >= LEASE_S - 0.5  # it waited for the lease to lapse


@pytest.mark.slow
def test_two_serve_processes_share_the_memories_and_one_takes_over_the_others(tmp_path):
    """Two `tomc serve --db URL` processes on one server (docs/storage.md, "The
    applier"): writes to six memories go through whichever holds each memory's lease;
    after kill -9 of one of them mid-write, the other takes its memories over once their
    leases lapse, and every acknowledged event is there exactly once."""
    names = [f"two_{n}" for n in range(6)]
    with connect(None, tmp_path / "data") as db:
        for name in names:
            with Session.attach(name, db=db) as s:
                s.apply(SETUP)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        serving = [subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--db", db.url,
                                     "--workers", "2"], env=env, cwd=REPO,
                                    stderr=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            while not db.redis.exists(appliers_key()):
                assert all(p.poll() is None for p in serving)
                time.sleep(0.05)
            acknowledged: dict[str, list[int]] = {name: [] for name in names}
            after_kill: list[float] = []
            killed = threading.Event()

            def write(name: str) -> None:
                with Session.attach(name, db=db) as s:
                    for n in range(30):
                        started = time.monotonic()
                        s.apply(f"A says {name}.n{n} = 1", idempotency_key=f"{name}-{n}")
                        acknowledged[name].append(n)
                        if killed.is_set():
                            after_kill.append(time.monotonic() - started)

            writers = [threading.Thread(target=write, args=(name,)) for name in names]
            for t in writers:
                t.start()
            while sum(len(a) for a in acknowledged.values()) < 40:
                time.sleep(0.01)
            serving[0].send_signal(signal.SIGKILL)
            serving[0].wait()
            killed.set()
            for t in writers:
                t.join(timeout=300)
            assert all(a == list(range(30)) for a in acknowledged.values())
            assert after_kill and max(after_kill) < 60  # taken over: LEASE_S, then a sweep
            for name in names:
                with Session.attach(name, db=db) as s:
                    texts = Counter(e.text for e in s.history())
                assert all(texts[f"A says {name}.n{n} = 1"] == 1 for n in range(30))
            serving[1].send_signal(signal.SIGTERM)
            assert serving[1].wait(timeout=60) == 0
            assert "Traceback" not in serving[1].stderr.read()
        finally:
            for p in serving:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stderr.close()
