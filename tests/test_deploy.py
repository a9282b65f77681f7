"""deploy/ (issue 20, item 5): the systemd unit and the container, tried as far as this
machine allows. No Docker engine runs here and systemd is not PID 1, so the image is not
built and the unit is not started by systemd; instead:

- the unit file is verified by `systemd-analyze verify` (its ExecStart pointed at this
  interpreter's `tomc`), and its ExecStart runs as systemd would run it (UMask=0077,
  stopped by KillSignal=SIGTERM within TimeoutStopSec);
- the Dockerfile's CMD and the compose file's service are run as the container would run
  them: `tomc serve` on a data folder listening on every interface, a client over TCP
  with the admin password read from the folder (as `docker exec tomc cat
  /data/admin.secret` gives it), and `docker stop`'s SIGTERM ending it cleanly within the
  compose file's stop_grace_period, the data kept for the next container."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Optional

import pytest
import yaml

from conftest import REPO
from tomc.api import Session
from tomc.runtime.connection import connect

DEPLOY = REPO / "deploy"
TOMC = Path(sys.executable).with_name("tomc")


def _unit() -> dict[str, str]:
    """The [Service] settings of deploy/tomc.service (one value per name)."""
    settings, section = {}, None
    for line in (DEPLOY / "tomc.service").read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "Service" and "=" in line and not line.startswith("#"):
            name, value = line.split("=", 1)
            settings[name.strip()] = value.strip()
    return settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(command: list[str], data: Path, **popen) -> subprocess.Popen:
    """Start `command` (a `tomc serve`) and wait for DATA/serving.json."""
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, **popen)
    for _ in range(1200):
        if (data / "serving.json").exists() or process.poll() is not None:
            break
        time.sleep(0.05)
    assert process.poll() is None, process.stderr.read()
    return process


def _stop(process: subprocess.Popen, grace_seconds: float) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=grace_seconds)
    finally:
        process.stderr.close()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_systemd_unit_verifies(tmp_path):
    unit = tmp_path / "tomc.service"
    text = (DEPLOY / "tomc.service").read_text()
    # The unit's example paths (/opt/tomc) are this environment's; User= may not exist here.
    text = text.replace(_unit()["ExecStart"].split()[0], str(TOMC))
    text = re.sub(r"^(User|Group)=.*$", "", text, flags=re.M)
    unit.write_text(text)
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr


def test_the_units_command_serves_privately_and_stops_on_its_kill_signal(tmp_path):
    unit = _unit()
    assert unit["KillSignal"] == "SIGTERM" and unit["UMask"] == "0077"
    data, port = tmp_path / "state" / "tomc", _free_port()
    arguments = unit["ExecStart"].split()[1:]
    arguments = [str(data) if a == "/var/lib/tomc" else str(port) if a == "6379" else a
                 for a in arguments]
    process = _serve([str(TOMC), *arguments], data, preexec_fn=lambda: os.umask(0o077))
    try:
        # through the folder, as every tomc command finds its server (a long folder's
        # socket is under /tmp)
        with connect(None, data) as conn, Session.attach("unit", db=conn) as live:
            live.apply("agents A, B\nA tells B k.s = 1")
    finally:
        code = _stop(process, float(unit["TimeoutStopSec"]))
    assert code == 0
    assert oct(data.stat().st_mode & 0o777) == "0o700"
    private = [p for p in data.rglob("*") if p.is_file()]
    assert private and all(p.stat().st_mode & 0o077 == 0 for p in private)


def _dockerfile_cmd() -> list[str]:
    """The Dockerfile's CMD, in exec form (JSON), so that tomc is PID 1 and gets SIGTERM."""
    (line,) = [line for line in (DEPLOY / "Dockerfile").read_text().splitlines()
               if line.startswith("CMD ")]
    return json.loads(line.removeprefix("CMD "))


def test_the_container_command_serves_over_tcp_and_keeps_its_volume(tmp_path):
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    service = compose["services"]["tomc"]
    assert service["volumes"] == ["tomc-data:/data"] and "tomc-data" in compose["volumes"]
    assert service["build"]["dockerfile"] == "deploy/Dockerfile"
    published = service["ports"][0]  # the host's loopback only
    assert published.startswith("127.0.0.1:") and published.endswith(":6379")
    grace = float(service["stop_grace_period"].removesuffix("s"))
    command = _dockerfile_cmd()
    assert command[:2] == ["tomc", "serve"] and "0.0.0.0" in command
    volume, port = tmp_path / "volume", _free_port()
    run = [str(TOMC) if a == "tomc" else str(volume) if a == "/data" else
           str(port) if a == "6379" else a for a in command]
    for container in ("first", "second"):  # the second container finds the first's data
        process = _serve(run, volume)
        try:
            secret = (volume / "admin.secret").read_text().strip()
            url = f"redis://default:{secret}@127.0.0.1:{port}"
            with Session.attach("boxed", db=url) as live:
                if container == "first":
                    live.apply("agents A, B\nA tells B k.s = 1")
                assert live.believes("B", "k.s").values == ["1"]
        finally:
            assert _stop(process, grace) == 0
        assert not (volume / "serving.json").exists()


# --- The hardened unit, the image's services and their health checks (issue 40, item 3) ---

PROBE = DEPLOY / "probe.py"  # `tomc-probe` in the image


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _offline_security(unit: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "security", "--offline=yes", str(unit)],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_systemd_unit_is_hardened_below_exposure_5(tmp_path):
    unit = tmp_path / "tomc.service"
    unit.write_text((DEPLOY / "tomc.service").read_text())
    done = _offline_security(unit)
    if done.returncode != 0 and "offline" in done.stderr:
        pytest.skip(f"this systemd-analyze cannot run offline: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    (level,) = re.findall(r"Overall exposure level for \S+: ([0-9.]+)", done.stdout)
    assert float(level) < 5.0, done.stdout


def _healthcheck(service: str) -> list[str]:
    """The compose service's HEALTHCHECK command, runnable here (`tomc-probe` is
    deploy/probe.py, `tomc` this environment's)."""
    test = _compose()["services"][service]["healthcheck"]["test"]
    assert test[0] == "CMD"
    program = {"tomc": [str(TOMC)], "tomc-probe": [sys.executable, str(PROBE)]}[test[1]]
    return [*program, *test[2:]]


def _as_here(command: list[str], volume: Path, ports: dict[str, int]) -> list[str]:
    """A compose service's `sh -ec` command as it runs here: compose's escapes and defaults
    resolved ($$ is $, ${TOMC_MEMORY:-main} main), the volume a folder, the tomc service's
    host 127.0.0.1 and each container port a free one."""
    assert command[:2] == ["sh", "-ec"]
    script = command[2].replace("$$", "$").replace("${TOMC_MEMORY:-main}", "main")
    script = script.replace("/data/", f"{volume}/").replace("tomc:6379", "127.0.0.1:6379")
    for given, free in ports.items():
        script = script.replace(given, str(free))
    return ["sh", "-ec", script]


def _ports(text: str, ports: dict[str, int]) -> str:
    for given, free in ports.items():
        text = text.replace(given, str(free))
    return text


def _health(service: str, ports: dict[str, int], env: dict) -> subprocess.CompletedProcess:
    """Run the compose service's HEALTHCHECK as Docker would (its exit code says healthy)."""
    command = [_ports(a, ports) for a in _healthcheck(service)]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)


def _env() -> dict:
    """This environment's, as the image's: `tomc` on PATH, no FALKORDB_URL."""
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}
    env["PATH"] = f"{TOMC.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _start(command: list[str], env: dict) -> subprocess.Popen:
    # A session of its own: whatever the script starts is stopped with it.
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    process.stderr.close()


def _until(check, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not healthy in time"
        time.sleep(0.2)


def _get(url: str, headers: Optional[dict] = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture
def tomc_service(tmp_path):
    """The compose file's `tomc` service run here: the image's CMD on a folder as its
    volume, its port a free one. Yields (volume, port, process)."""
    volume, port = tmp_path / "volume", _free_port()
    run = [str(TOMC) if a == "tomc" else str(volume) if a == "/data" else
           str(port) if a == "6379" else a for a in _dockerfile_cmd()]
    process = _serve(run, volume)
    try:
        yield volume, port, process
    finally:
        if process.poll() is None:
            _stop(process, 30)


def test_the_image_and_compose_check_tomc_serve_alike():
    (line,) = [line for line in (DEPLOY / "Dockerfile").read_text().splitlines()
               if line.lstrip().startswith("CMD [\"tomc\", \"serve\", \"--check\"")]
    assert json.loads(line.strip().removeprefix("CMD ")) == \
        _compose()["services"]["tomc"]["healthcheck"]["test"][1:]


def test_the_image_installs_no_compiler_and_no_source_build():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert '--only-binary=:all: "/src[image]"' in dockerfile
    assert not re.search(r"\b(gcc|g\+\+|clang|build-essential|make)\b",
                         dockerfile.split("apt-get install", 1)[1].split("\n", 1)[0])
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    assert extras["image"] == ["tomc[mcp,lsp,review,extract,web,embed]"]  # no lite: a compiler
    assert extras["all"] == ["tomc[image,lite]"]


def test_tomc_serve_check_is_the_health_of_a_data_folder(tomc_service, tmp_path):
    volume, port, process = tomc_service
    env = _env()
    done = _health("tomc", {"/data": str(volume)}, env)
    assert done.returncode == 0, done.stderr
    nowhere = subprocess.run([str(TOMC), "serve", "--check", "--data", str(tmp_path / "none")],
                             capture_output=True, text=True, timeout=30, env=env)
    assert nowhere.returncode == 3 and "no `tomc serve` runs on" in nowhere.stderr
    assert not (tmp_path / "none").exists()  # it started nothing there
    bad = subprocess.run([str(TOMC), "serve", "--check", "--port", "1"], capture_output=True,
                         text=True, timeout=30, env=env)
    assert bad.returncode == 2 and "--port" in bad.stderr
    assert _stop(process, 30) == 0
    done = _health("tomc", {"/data": str(volume)}, env)
    assert done.returncode == 3 and "unhealthy" in done.stderr


def test_the_http_service_serves_healthz_over_the_compose_network(tomc_service):
    volume, port, process = tomc_service
    http_port, env = _free_port(), _env()
    service = _compose()["services"]["http"]
    assert service["depends_on"]["tomc"]["condition"] == "service_healthy"
    assert service["volumes"] == ["tomc-data:/data:ro"]
    assert service["ports"] == ["127.0.0.1:8780:8780"]
    ports = {"6379": port, "8780": http_port}
    http = _start(_as_here(service["command"], volume, ports), env)
    try:
        base = f"http://127.0.0.1:{http_port}"
        _until(lambda: _health("http", ports, env).returncode == 0)
        # The password reached tomc http in its environment, not on its command line.
        secret = (volume / "admin.secret").read_text().strip()
        assert secret not in Path(f"/proc/{http.pid}/cmdline").read_text()
        status, body = _get(f"{base}/healthz")  # no token
        assert (status, json.loads(body)) == (200, {"status": "ok"})
        assert _get(f"{base}/healthz", {"Host": "localhost"})[0] == 200
        # The Host check holds for it too: a name the service does not answer is refused.
        assert _get(f"{base}/healthz", {"Host": "rebound.example"})[0] == 400
        assert _get(f"{base}/memories/main")[0] == 401  # the API itself still needs a token
        assert _stop(process, 30) == 0  # FalkorDB gone
        status, body = _get(f"{base}/healthz")
        assert (status, json.loads(body)) == (503, {"status": "unavailable"})
        done = _health("http", ports, env)
        assert done.returncode == 1 and "answered 503, not 200" in done.stderr
    finally:
        _end(http)


def test_the_mcp_service_answers_its_published_host_and_its_probe_sees_falkordb(tomc_service):
    volume, port, process = tomc_service
    mcp_port, env = _free_port(), _env()
    service = _compose()["services"]["mcp"]
    assert service["ports"] == ["127.0.0.1:8765:8765"]
    ports = {"6379": port, "8765": mcp_port}
    mcp = _start(_as_here(service["command"], volume, ports), env)
    try:
        _until(lambda: _health("mcp", ports, env).returncode == 0, 90)
        # As a client on the host reaches it (its Host, the published one), and not through
        # a name the server was not given (DNS rebinding).
        status, body = _get(f"http://127.0.0.1:{mcp_port}/mcp",
                            {"Host": f"127.0.0.1:{mcp_port}"})
        assert status == 401 and json.loads(body)["error"] == "invalid_token"
        with Session.attach("main", db=f"unix://{volume / 'redis.sock'}", create=False):
            pass  # --create made the memory TOMC_MEMORY names (default main)
        assert _stop(process, 30) == 0
        done = _health("mcp", ports, env)
        assert done.returncode == 1 and "answered 503, not 401" in done.stderr
    finally:
        _end(mcp)


def test_the_wheel_ships_notice(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "NOTICE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "tomc", source / "tomc",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                           "-q", "-w", str(tmp_path / "wheels")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "wheels").glob("tomc-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (notice,) = [n for n in names if n.endswith(".dist-info/licenses/NOTICE")]
        assert archive.read(notice) == (REPO / "NOTICE").read_bytes()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def _docker(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *arguments], capture_output=True, text=True,
                          timeout=timeout)


@functools.cache
def _engine_skip() -> Optional[str]:
    """Why the image cannot be built here, or None (a container engine that answers)."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    try:
        info = _docker("info", "--format", "{{.ServerVersion}}", timeout=10)
    except subprocess.TimeoutExpired:
        return "the docker engine does not answer"
    return None if info.returncode == 0 else \
        f"no container engine runs here ({info.stderr.strip().splitlines()[-1:]})"


@pytest.mark.slow
@pytest.mark.skipif(_engine_skip() is not None, reason=str(_engine_skip()))
def test_the_image_builds_and_its_healthcheck_passes():
    base = "python:3.12-slim"
    if _docker("image", "inspect", base).returncode != 0:
        pulled = _docker("pull", base, timeout=600)
        if pulled.returncode != 0:
            pytest.skip(f"the engine cannot pull {base}: {pulled.stderr.strip()}")
    tag = f"tomc-test:{os.getpid()}"
    built = _docker("build", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(REPO),
                    timeout=1800)
    assert built.returncode == 0, built.stderr[-4000:]
    name = f"tomc-test-{os.getpid()}"
    try:
        assert _docker("run", "--rm", "--entrypoint", "sh", tag, "-c",
                       "command -v gcc || command -v cc").returncode != 0  # no compiler
        started = _docker("run", "-d", "--name", name, tag)
        assert started.returncode == 0, started.stderr
        health = lambda: _docker("inspect", "--format", "{{.State.Health.Status}}",
                                 name).stdout.strip()
        _until(lambda: health() == "healthy", 120)
        assert _docker("exec", name, "tomc", "memory", "list").returncode == 0  # TOMC_DATA
        stopped = _docker("stop", "-t", "30", name, timeout=60)
        assert stopped.returncode == 0
        code = _docker("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        assert code == "0"
    finally:
        _docker("rm", "-f", name)
        _docker("rmi", "-f", tag)
