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

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from tomc.api import Session

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
        with Session.attach("unit", db=f"unix://{data / 'redis.sock'}") as live:
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
