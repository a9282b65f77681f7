"""The FalkorDB runtime: graph naming and replacement, append-only history, and the embedded
server's lifecycle (AOF persistence, leftovers of a killed run, a second process)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import replace

import pytest

from conftest import SCENARIOS
from helpers import run_both, scenario
from tomc.compiler.lower import Compiler
from tomc.compiler.plan import graph_names
from tomc.engine.falkordb import FalkorEngine
from tomc.dsl.checker import check_file
from tomc.runner import run_scenario
from tomc.runtime.connection import connect
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.executor import HOST, STAGING_MARK, Directory
from tomc.runtime.forks import FORK_PREFIX, fork
from tomc.runtime.server import EmbeddedServer


def sally_anne():
    return check_file(SCENARIOS / "sally_anne.tom").scenarios[0]


def test_one_world_graph_and_one_mind_graph_per_agent(db):
    run_scenario(sally_anne(), "falkordb", db)
    names = set(db.graph_names())
    assert {"tom:sally_anne:world", "tom:sally_anne:mind:Sally",
            "tom:sally_anne:mind:Anne"} <= names
    assert not any("~" in n for n in names)  # no staging graph left behind


def test_rerun_replaces_the_graphs(db):
    run_scenario(sally_anne(), "falkordb", db)
    count = "MATCH (n) RETURN count(n)"
    first = db.graph("tom:sally_anne:world").query(count).result_set
    run_scenario(sally_anne(), "falkordb", db)
    assert db.graph("tom:sally_anne:world").query(count).result_set == first


def test_a_removed_agent_loses_its_mind_graph_on_rerun(db):
    text = "scenario shrink {\n  agents A, B\n}\n"
    run_scenario(scenario(text), "falkordb", db)
    assert "tom:shrink:mind:B" in db.graph_names()
    run_scenario(scenario(text.replace("A, B", "A")), "falkordb", db)
    assert "tom:shrink:mind:B" not in db.graph_names()


def test_scenario_and_agent_names_cannot_reach_other_graphs(db):
    other = scenario('scenario "a:mind:Q" {\n  agents Q\n  Q sets k.s = 1\n}\n')
    run_scenario(other, "falkordb", db)
    run_scenario(scenario('scenario a {\n  agents P, "Q:world", "P~building"\n}\n'),
                 "falkordb", db)
    names = db.graph_names()  # running `a` left `a:mind:Q`'s graphs alone
    assert "tom:a%3Amind%3AQ:world" in names and "tom:a%3Amind%3AQ:mind:Q" in names
    assert "tom:a:mind:Q%3Aworld" in names
    assert "tom:a:mind:P%7Ebuilding" in names and "tom:a:mind:P" in names


def test_superseded_beliefs_are_closed_not_deleted(db):
    run_scenario(sally_anne(), "falkordb", db)
    rows = db.graph("tom:sally_anne:mind:Anne").query(
        "MATCH (p:P {agents: ['Anne']})-[:HOLDS|HELD]->(b:V) "
        "OPTIONAL MATCH (b)<-[:SUPERSEDES]-(n:V) "
        "RETURN b.value, b.since, b.until, n.value ORDER BY b.since").result_set
    assert rows == [["basket", 2, 4, "box"], ["box", 4, None, None]]


def test_presence_history_is_kept(db):
    run_scenario(sally_anne(), "falkordb", db)
    rows = db.graph("tom:sally_anne:world").query(
        "MATCH (:Agent {name: 'Sally'})-[i:IN|WAS_IN]->(r:Room) RETURN i.since, i.until "
        "ORDER BY i.since").result_set
    assert rows == [[1, 3], [5, None]]


def test_a_failed_run_leaves_the_stored_graphs_untouched(db, monkeypatch):
    run_scenario(sally_anne(), "falkordb", db)
    compile_event = Compiler.event

    def broken(self, event, *args, **kwargs):
        # A statement the server rejects half-way through the run, as a crash would.
        plan = compile_event(self, event, *args, **kwargs)
        if event.step == 4:
            plan.statements[0] = replace(plan.statements[0], cypher="NOT CYPHER")
        return plan

    monkeypatch.setattr(Compiler, "event", broken)
    with pytest.raises(DatabaseUnavailable, match="NOT CYPHER"):
        FalkorEngine.build(db, sally_anne())
    assert db.graph("tom:sally_anne:world").query(
        "MATCH (e:Event) RETURN count(e)").result_set == [[5]]
    assert not any("~" in n for n in db.graph_names())


def test_aof_keeps_acknowledged_writes_after_sigkill(tmp_path, monkeypatch):
    monkeypatch.delenv("FALKORDB_URL", raising=False)  # these test the embedded server
    server = EmbeddedServer(tmp_path).start()
    with connect(f"unix://{server.socket_path}") as db:
        db.graph("probe").query("CREATE (:N {v: 'kept'})")
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    server._unlock()
    with connect(data_dir=tmp_path) as db:  # stale socket and pidfile are cleared
        assert db.graph("probe").query("MATCH (n:N) RETURN n.v").result_set == [["kept"]]


def test_an_orphan_server_from_a_killed_run_is_shut_down_and_replaced(tmp_path, monkeypatch):
    monkeypatch.delenv("FALKORDB_URL", raising=False)  # these test the embedded server
    orphan = EmbeddedServer(tmp_path, tied=False).start()  # no watchdog stops it
    with connect(f"unix://{orphan.socket_path}") as db:
        db.graph("probe").query("CREATE (:N {v: 1})")
    orphan._unlock()  # as if tomc and its watchdog were killed: the server runs on, unowned
    with connect(data_dir=tmp_path) as db:
        assert db.graph("probe").query("MATCH (n:N) RETURN n.v").result_set == [[1]]
    assert orphan.process.wait(timeout=10) == 0


def test_a_second_process_on_the_same_data_folder_is_refused(tmp_path):
    with EmbeddedServer(tmp_path):
        with pytest.raises(DatabaseUnavailable, match="in use by another tomc process"):
            EmbeddedServer(tmp_path).start()


def test_a_long_data_path_still_gets_a_short_socket(tmp_path, monkeypatch):
    monkeypatch.delenv("FALKORDB_URL", raising=False)  # these test the embedded server
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with connect(data_dir=deep) as db:
        assert len(db.url) < 120
        db.graph("probe").query("RETURN 1")


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_staging_graphs_and_forks_of_a_dead_run_are_removed_and_other_hosts_kept(db):
    dead = _dead_pid()
    mine = f"tom:sally_anne:world{STAGING_MARK}{HOST}-{dead}-abcd1234"
    theirs = f"tom:sally_anne:world{STAGING_MARK}otherhost-{dead}-abcd1234"
    fork = f"{FORK_PREFIX}:{HOST}-{dead}-0123456789ab:world"
    other_fork = f"{FORK_PREFIX}:otherhost-{dead}-0123456789ab:world"
    for name in (mine, theirs, fork, other_fork):
        db.graph(name).query("CREATE (:Left)")
    run_scenario(sally_anne(), "falkordb", db)  # a new run clears what dead runs left here
    names = set(db.graph_names())
    assert mine not in names and fork not in names
    assert theirs in names and other_fork in names  # another host's runs may still be going
    db.redis.delete(theirs, other_fork)


def test_a_server_that_accepts_but_never_answers_is_exit_3_not_a_hang():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # connections are accepted by the kernel, never answered
        port = silent.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-c", "from tomc.cli.main import main; main()", "run",
             str(SCENARIOS / "sally_anne.tom"), "--db", f"redis://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert "cannot reach FalkorDB" in result.stderr and "Traceback" not in result.stderr


def test_an_agent_called_world_has_a_mind_graph_of_its_own(db):
    # The world graph's statements were once addressed by the string "world", so this
    # agent's mind statements went to the world graph (found by hypothesis).
    text = ("scenario called_world {\n  agents world, B\n  rooms r\n  world, B enter r\n"
            "  world says k.s = v\n  B tells world k.s = x\n"
            "  expect world believes k.s = x\n  expect B > world believes k.s = x\n"
            "  expect truth k.s unknown\n}\n")
    on_falkordb, on_reference = run_both(db, text)
    assert [a.passed for a in on_falkordb.answers] == [True, True, True]
    assert [a.shown for a in on_falkordb.answers] == [a.shown for a in on_reference.answers]


def test_a_simulation_waits_for_an_aof_rewrite_to_fork(db):
    # GRAPH.COPY cannot fork while the server's AOF rewrite child runs: `tomc report` of a
    # scenario with plan_announcements failed with exit 3 when one was under way (CI).
    run_scenario(sally_anne(), "falkordb", db)
    graphs = graph_names("sally_anne", ["Sally", "Anne"])
    db.redis.execute_command("BGREWRITEAOF")
    with fork(db, graphs, {"Sally"}, Directory()) as forked:
        assert db.redis.exists(forked.world, forked.mind("Sally"))


def test_a_socket_path_too_long_for_the_loading_socket_is_refused_clearly(tmp_path):
    """The server loads on `<socket>.loading.sock` (docs/falkordb.md check 2.12): a
    `--socket` path that leaves no room for it is bad input, named, before anything runs."""
    long_dir = tmp_path / ("d" * max(1, 101 - len(str(tmp_path)) - len("/redis.sock") - 1))
    socket_path = long_dir / "redis.sock"
    assert 100 <= len(str(socket_path)) < 108
    with pytest.raises(ValueError, match="bytes: tomc loads the server on redis.loading.sock"):
        EmbeddedServer(tmp_path / "data", socket=socket_path)
    done = subprocess.run([sys.executable, "-m", "tomc", "serve", "--data", str(tmp_path / "d2"),
                           "--socket", str(socket_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--socket: socket path" in done.stderr and "at most 99 bytes" in done.stderr
