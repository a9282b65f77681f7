"""What tomc asks of other processes, through psutil, the same on Linux and macOS: whether a
process runs, when it started (a pid is reused: a process is the one a file names only if its
start time matches too), and which redis-servers work in a data folder.

Used by the embedded server (tomc/runtime/server.py), its watchdog (tomc/runtime/watchdog.py)
and, through the server module, the cleanup of graphs a killed run was building
(tomc/runtime/executor.py, forks.py).
psutil is imported on first use: 15 ms that most commands never need.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional

# How far two readings of one process's start time may differ: Linux derives it from the
# boot time, which moves when the clock is stepped (NTP). A pid reused within a second of
# the start of the process a file names would pass; the processes tomc records (servers
# and their owners) run far longer than that before their pid can be reused.
START_SLACK_S = 1.0
SERVER_NAME = "redis-server"  # the embedded server's executable (tomc/runtime/server.py)


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs on this machine (a zombie, which has exited but not been
    reaped by its parent yet, counts as gone; a pid <= 0 names no process)."""
    import psutil

    if pid <= 0:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # ZombieProcess too, where the system raises it
        return False
    except psutil.AccessDenied:  # another user's process: it exists
        return True


def wait_gone(pid: int, seconds: float) -> bool:
    """Wait up to `seconds` for process `pid` (not necessarily a child) to end; whether it
    did (`process_alive`: a zombie is gone)."""
    deadline = time.monotonic() + seconds
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def process_start(pid: int) -> Optional[float]:
    """When process `pid` started (seconds since the epoch), or None when it does not run
    or the system will not say (another user's process)."""
    import psutil

    if pid <= 0:
        return None
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def same_process(pid: int, started: Optional[float]) -> bool:
    """Whether `pid` runs and is the process that started at `started` (`process_start`,
    when it was known: None trusts the pid alone)."""
    if not process_alive(pid):
        return False
    if started is None:
        return True
    now = process_start(pid)
    return now is None or abs(now - started) < START_SLACK_S


def serves(pid: int, data_dir: Path) -> bool:
    """Whether `pid` is a running redis-server working in `data_dir` (`--dir` makes the
    folder its working directory; its command line is rewritten into a title that does not
    name the folder)."""
    import psutil

    if pid <= 0:
        return False
    try:
        return _is_server_of(psutil.Process(pid), os.path.realpath(data_dir))
    except psutil.Error:  # gone, or another user's
        return False


def servers_of(data_dir: Path) -> set[int]:
    """The pids of every running redis-server working in `data_dir`, whoever started
    them (a server whose pidfile is gone too)."""
    import psutil

    folder = os.path.realpath(data_dir)
    found = set()
    for process in psutil.process_iter(["name"]):
        if process.info["name"] != SERVER_NAME:
            continue
        try:
            if _is_server_of(process, folder):
                found.add(process.pid)
        except psutil.Error:  # ended meanwhile, or another user's
            continue
    return found


def _is_server_of(process, folder: str) -> bool:
    """Whether `process` (a psutil.Process) is a live redis-server whose working directory
    is `folder` (a resolved path). Raises psutil.Error when the process is gone or hidden."""
    import psutil

    return (process.name() == SERVER_NAME and process.status() != psutil.STATUS_ZOMBIE
            and process.cwd() == folder)
