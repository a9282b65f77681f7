"""The embedded server's processes (issue 40, item 2): its lifetime tied to its owner's (a
killed `tomc mcp` leaves no FalkorDB running), the watchdog that does it, the data folder's
lock, and process checks that go through psutil only, never /proc, so they run the same on
macOS (which has none), where CI cannot run. Real processes and real servers throughout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from typer.testing import CliRunner

from conftest import REPO
from tomc.cli.main import app
from tomc.memory import catalog
from tomc.runtime import watchdog
from tomc.runtime.connection import connect
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.processes import (process_alive, process_start, same_process, servers_of,
                                    wait_gone)
from tomc.runtime.server import EmbeddedServer, serving


@pytest.fixture
def env(monkeypatch) -> dict:
    """The environment of a tomc subprocess on an embedded server (no FALKORDB_URL)."""
    monkeypatch.delenv("FALKORDB_URL", raising=False)
    return {**{k: v for k, v in os.environ.items() if k != "FALKORDB_URL"},
            "PYTHONPATH": str(REPO)}


def wait_for_memory(data, owner: subprocess.Popen, name: str) -> int:
    """The pid of the server `owner` started on `data`, once memory `name` is stored there
    (asked on the server's socket, with the folder's secret)."""
    for _ in range(1200):
        assert owner.poll() is None, owner.stderr.read()
        if (data / "redis.sock").exists():
            try:
                with connect(f"unix://{data / 'redis.sock'}") as db:
                    if catalog.read(db, name) is not None:
                        return int((data / "redis.pid").read_text())
            except (DatabaseUnavailable, OSError, ValueError):
                pass  # still loading, or the secret not set yet
        time.sleep(0.1)
    raise AssertionError(f"no memory {name} on {data}")


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_tomc_mcp_leaves_no_server_running(tmp_path, env, signum):
    data = tmp_path / "data"
    mcp = subprocess.Popen([sys.executable, "-m", "tomc", "mcp", "--memory", "kept", "--create"],
                           env={**env, "TOMC_DATA": str(data)}, stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        server = wait_for_memory(data, mcp, "kept")
        assert servers_of(data) == {server}
        # the folder is owned: another process is refused, and the lock file is private
        with pytest.raises(DatabaseUnavailable, match="in use by another tomc process"):
            EmbeddedServer(data).start()
        assert (data / "tomc.lock").stat().st_mode & 0o777 == 0o600
        mcp.send_signal(signum)
        # SIGKILL: the watchdog stops it; SIGTERM: tomc unwinds and stops it itself
        assert wait_gone(server, 30), f"FalkorDB (pid {server}) outlived its killed owner"
        # and the process is gone too, its stdin still open (the MCP SDK's thread blocked
        # reading it does not keep it: tomc/cli/main.py)
        assert mcp.wait(timeout=30) == (-signal.SIGKILL if signum == signal.SIGKILL else 143)
    finally:
        mcp.kill()
        mcp.wait()
        mcp.stdin.close()
        mcp.stderr.close()
    assert servers_of(data) == set()
    assert "Redis is now ready to exit" in (data / "redis.log").read_text()  # shut down cleanly
    listed = CliRunner().invoke(app, ["memory", "list", "--data", str(data)])
    assert listed.exit_code == 0 and "kept" in listed.stdout  # the folder reopens, data kept


def test_a_clean_stop_lets_the_watchdog_go_without_a_signal(tmp_path, monkeypatch):
    monkeypatch.delenv("FALKORDB_URL", raising=False)
    server = EmbeddedServer(tmp_path / "data").start()
    dog = server._watchdog
    assert dog is not None and dog.poll() is None
    server.stop()
    assert dog.returncode == 0 and server._watchdog is None
    log = (tmp_path / "data" / "redis.log").read_text()
    assert "SIGTERM" not in log and "User requested shutdown" in log  # stopped by SHUTDOWN


def test_the_watchdog_never_signals_a_reused_pid(tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        started = process_start(sleeper.pid)
        read_end, write_end = os.pipe()
        os.close(write_end)  # the "owner" is gone
        watchdog.watch(sleeper.pid, started - 100, read_end)  # another process on that pid
        os.close(read_end)
        watchdog.stop(sleeper.pid, started + 100)
        assert sleeper.poll() is None  # left alone
        assert same_process(sleeper.pid, started) and not same_process(sleeper.pid, started - 100)
        watchdog.stop(sleeper.pid, started)  # its own: SIGTERM
        assert sleeper.wait(timeout=5) == -signal.SIGTERM
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_killed_tomc_serve_leaves_its_server_serving(tmp_path, env):
    data = tmp_path / "served"
    serve = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--data", str(data)],
                             env=env, stderr=subprocess.PIPE)
    try:
        for _ in range(1200):
            info = data / "serving.json"
            if info.exists() and json.loads(info.read_text())["owner"] == serve.pid:
                break
            assert serve.poll() is None, serve.stderr.read()
            time.sleep(0.05)
        server = json.loads((data / "serving.json").read_text())["pid"]
        serve.kill()
        serve.wait()
        time.sleep(1.0)
        assert process_alive(server) and serving(data) == data / "redis.sock"  # clients go on
    finally:
        serve.kill()
        serve.wait()
        serve.stderr.close()
    os.kill(server, signal.SIGTERM)
    assert wait_gone(server, 30)


# Run in a process whose audit hook refuses tomc's own code any path under /proc (psutil's
# reads, its Linux backend, pass): the lifecycle runs as it would where /proc does not exist.
NO_PROC = """
import os, sys
from pathlib import Path

refused = []

def hook(event, args):
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    path = args[0]
    path = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
    if not path.startswith("/proc"):
        return
    frame = sys._getframe(1)
    while frame is not None:
        if os.sep + "psutil" + os.sep in frame.f_code.co_filename:
            return
        frame = frame.f_back
    refused.append(path)
    raise PermissionError(f"no /proc here: {path}")

sys.addaudithook(hook)

from tomc.runtime import watchdog
from tomc.runtime.processes import (process_alive, process_start, same_process, servers_of,
                                    serves)
from tomc.runtime.server import EmbeddedServer, serving

data = Path(sys.argv[1])
me = os.getpid()
assert process_alive(me) and same_process(me, process_start(me))
assert not same_process(me, process_start(me) - 100)
# an orphan no watchdog stops, its pidfile gone: found among the processes, stopped
orphan = EmbeddedServer(data, tied=False).start()
orphan._unlock()
orphan.pid_path.unlink()
server = EmbeddedServer(data).start()
assert orphan.process.wait(timeout=30) is not None
assert servers_of(data) == {server.process.pid} and serves(server.process.pid, data)
server.announce()
assert serving(data) == server.socket_path
dog = server._watchdog
server.stop()
assert dog.returncode == 0 and servers_of(data) == set() and serving(data) is None
# the watchdog's own code, run here: an owner gone stops the server
lone = EmbeddedServer(data, tied=False).start()
read_end, write_end = os.pipe()
os.close(write_end)
watchdog.watch(lone.process.pid, process_start(lone.process.pid), read_end)
assert lone.process.wait(timeout=5) == 0
lone.process = None
lone.stop()
assert not refused, refused
print("no /proc read by tomc")
"""


def test_process_checks_and_the_lifecycle_need_no_proc(tmp_path, env):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(NO_PROC), str(tmp_path / "d")],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "no /proc read by tomc" in done.stdout
