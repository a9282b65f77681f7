"""The watchdog of an embedded FalkorDB: stops the server when the process that owns it is
gone, however it went (kill -9, SIGTERM, a crash, an exit without `stop()`).

    python -m tomc.runtime.watchdog SERVER_PID SERVER_START

The owner (tomc/runtime/server.py, `EmbeddedServer.start`) launches it right after the
server, in a session of its own (a signal to the owner's terminal or process group does not
reach it), with its standard input the read end of a pipe whose only write end the owner
holds (not inherited by the owner's other children: Python's pipes are close-on-exec). The
kernel closes that end when the owner exits, whatever killed it: the watchdog reads end of
file at once, and sends the server SIGTERM, which shuts redis down as SHUTDOWN does (the AOF
flushed); SIGKILL only if it has not exited STOP_TIMEOUT_S later, as `EmbeddedServer.stop`
does. It then exits.

The server is named by its pid and its start time (`process_start`), so a pid reused after
the server exited is never signalled. A clean `stop()` shuts the server down first and then
closes the pipe: the watchdog finds its server gone and exits without signalling anything.
It also exits, every POLL_S, once its server has exited by itself (a crash, a full disk).
If the watchdog itself is killed, the next start on the folder still stops the orphan
(`EmbeddedServer._clear_leftovers`). Only standard library and psutil: it starts in a
fraction of the server's own start, alongside it.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from tomc.runtime.processes import same_process

POLL_S = 5.0  # how often an idle watchdog checks that its server still runs
STOP_TIMEOUT_S = 10.0  # SIGTERM, then this long for the AOF to be flushed, then SIGKILL


def watch(server: int, started: float, owner_end: int = 0) -> None:
    """Block until the owner's end of the pipe read on fd `owner_end` closes, then stop the
    server (pid `server`, started at `started`); return at once if the server is gone."""
    while True:
        ready, _, _ = select.select([owner_end], [], [], POLL_S)
        if not same_process(server, started):
            return  # stopped by its owner, or exited by itself
        if ready and os.read(owner_end, 64) == b"":  # the owner is gone
            stop(server, started)
            return


def stop(server: int, started: float) -> None:
    """SIGTERM (redis shuts down cleanly, flushing its AOF), wait up to STOP_TIMEOUT_S,
    then SIGKILL; nothing is sent once the process is gone or is another one."""
    for signum, wait_s in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 1.0)):
        if not same_process(server, started):
            return
        try:
            os.kill(server, signum)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while same_process(server, started) and time.monotonic() < deadline:
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    """`SERVER_PID SERVER_START` (as `process_start` gave it): watch on standard input."""
    try:
        server, started = int(argv[0]), float(argv[1])
    except (IndexError, ValueError):
        print("usage: python -m tomc.runtime.watchdog SERVER_PID SERVER_START",
              file=sys.stderr)
        return 2
    watch(server, started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
