"""A served memory restarted over and over while clients poll (issue 34 item 1): does it
come back every time, how long does it take, and does it answer as before?

    python -m eval.restarts [--events 100000] [--restarts 20] [--agents 5] [--out DIR]

`tomc serve --data DIR` is started on a fresh folder (the FalkorDB `$TOMC_EMBEDDED` picks),
AGENTS agents in one room, and EVENTS events of the mixed workload (eval/workload.py) are
written through it. Then, RESTARTS times: BETWEEN more events are written and the answers
read (beliefs at depth 1 and 2 over every workload key, and the step reached); the server
is stopped, by kill -9 of the server and its owner three times in four (the AOF's log is
replayed) and by SIGTERM the fourth (the AOF is compacted); `tomc serve` is started again
while two clients hammer its socket; a new session attaches and must answer as before.
Counted: starts that fail (FalkorDB's `ASSERTION FAILED` in redis.log, or `tomc serve`
exiting), answers that differ, and the seconds from launch until `tomc serve` serves.

Writes restarts-<FalkorDB version>.json and .md. tests/test_reopen.py runs the same
restarts, smaller, with slow transactions in the AOF (the case that crashed FalkorDB 4.16).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import redis

from eval.results_files import DEFAULT_OUT, write_results
from eval.workload import agent_names, mixed_events, setup_statements
from tomc.api import Session

NAME = "lasting"
GROUP = 20  # statements per write while filling
BETWEEN = 100  # events written before each restart
SERVE_TIMEOUT_S = 600


def serve_env() -> dict:
    """The environment for `tomc serve`: not pointed at another server."""
    return {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}


def serve(data: Path) -> tuple[subprocess.Popen, dict]:
    """`tomc serve --data DATA` once it says where it listens: (the process, serving.json)."""
    data.mkdir(parents=True, exist_ok=True)
    # Its messages to a file: a pipe nobody drains would block it after 64 KB.
    errors = open(data.parent / "serve.err", "a+", encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "tomc", "serve", "--data", str(data)],
                               env=serve_env(), stderr=errors, text=True)
    process.errors = errors
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        info = data / "serving.json"  # a killed server's is left: wait for ours
        try:
            found = json.loads(info.read_text())
        except (OSError, ValueError):
            found = None
        if found and found["owner"] == process.pid:
            return process, found
        if process.poll() is not None:
            errors.seek(0)
            raise ServeFailed(f"tomc serve exited {process.returncode}: "
                              f"{errors.read()[-2000:]}\nredis.log ends: {log_tail(data)}")
        time.sleep(0.05)
    raise ServeFailed(f"tomc serve did not start within {SERVE_TIMEOUT_S} s")


class ServeFailed(Exception):
    """`tomc serve` exited or never served."""


def log_tail(data: Path, lines: int = 15) -> str:
    """The last `lines` lines of the folder's redis.log."""
    try:
        return "\n".join((data / "redis.log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop(process: subprocess.Popen, info: dict, clean: bool) -> None:
    """SIGTERM to `tomc serve` (a clean stop), or kill -9 of the server, then its owner."""
    if clean:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=SERVE_TIMEOUT_S)
    else:
        os.kill(info["pid"], signal.SIGKILL)
        process.kill()
        process.wait()
    process.errors.close()


class Pollers:
    """Threads that connect to the public socket and send PING and a graph read, over and
    over (a raw socket each time: no client library backs off), while the server starts."""

    def __init__(self, path: Path, threads: int = 2):
        self.path, self.stop, self.answered = str(path), threading.Event(), 0
        self._count = threading.Lock()
        self.threads = [threading.Thread(target=self._poll, daemon=True)
                        for _ in range(threads)]

    def __enter__(self) -> "Pollers":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)

    def _poll(self) -> None:
        commands = [b"PING\r\n",
                    b"*3\r\n$14\r\nGRAPH.RO_QUERY\r\n$7\r\nscratch\r\n$8\r\nRETURN 1\r\n"]
        n = 0
        while not self.stop.is_set():
            n += 1
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.settimeout(2)
                    conn.connect(self.path)
                    conn.sendall(commands[n % 2])
                    if conn.recv(256):
                        with self._count:
                            self.answered += 1
            except OSError:
                pass


def answers(session: Session, agents: list[str]) -> dict:
    """Beliefs at depth 1 and 2 over every workload key, and the step reached."""
    found = {"step": session.step}
    for key in (f"ticket{i}.status" for i in range(10)):
        found[key] = session.truth(key).values
        for a in agents[:3]:
            found[f"{a}:{key}"] = session.believes(a, key).values
            found[f"{a}>{agents[4]}:{key}"] = session.believes([a, agents[4]], key).values
    return found


def admin(info: dict, data: Path) -> redis.Redis:
    """The administrator's connection to a served folder."""
    return redis.Redis(unix_socket_path=info["socket"],
                       password=(data / "admin.secret").read_text().strip())


def falkordb_version(info: dict, data: Path) -> str:
    """The FalkorDB version of a served folder, e.g. `4.16.3`."""
    client = admin(info, data)
    try:
        for module in client.module_list():
            if module[b"name"] == b"graph":
                ver = int(module[b"ver"])
                return f"{ver // 10000}.{ver // 100 % 100}.{ver % 100}"
    finally:
        client.close()
    return "unknown"


def write(url: str, texts, count: int, agents: list[str], declare: bool = False,
          progress: Callable[[str], None] = lambda _: None) -> dict:
    """Write `count` events from `texts` in groups (the agents declared first if `declare`);
    return the answers read after them."""
    with Session.attach(NAME, db=url) as live:
        if declare:
            for statement in setup_statements(agents):
                live.apply(statement)
        done = 0
        while done < count:
            group = min(GROUP, count - done)
            live.apply("\n".join(next(texts) for _ in range(group)))
            done += group
            if done % 5000 < group:
                progress(f"{done} events written")
        return answers(live, agents)


def run(events: int, restarts: int, agent_count: int,
        progress: Callable[[str], None] = lambda line: None) -> dict:
    """The whole run (module docstring): the document written as restarts-VERSION.json."""
    agents = agent_names(agent_count)
    texts = mixed_events(agents, 10**9)
    rounds, crashes, differ = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="tomc-restarts-") as folder:
        data = Path(folder) / "data"
        process, info = serve(data)
        version = falkordb_version(info, data)
        url = f"unix://{info['socket']}"
        started = time.perf_counter()
        expected = write(url, texts, events, agents, declare=True, progress=progress)
        filled_s = time.perf_counter() - started
        try:
            for n in range(restarts):
                expected = write(url, texts, BETWEEN, agents)
                clean = n % 4 == 3
                if not clean:
                    time.sleep(2.5)  # `everysec` has written the last transactions
                stop(process, info, clean)
                with Pollers(Path(info["socket"])) as pollers:
                    launched = time.perf_counter()
                    try:
                        process, info = serve(data)
                    except ServeFailed as failure:
                        crashes += 1
                        rounds.append({"stop": "SIGTERM" if clean else "kill -9",
                                       "failed": str(failure)[-2000:]})
                        progress(f"restart {n + 1}: FAILED {failure}")
                        break
                    took = time.perf_counter() - launched
                with Session.attach(NAME, db=f"unix://{info['socket']}", create=False) as after:
                    same = answers(after, agents) == expected
                differ += not same
                rounds.append({"stop": "SIGTERM" if clean else "kill -9", "reopen_s": took,
                               "same_answers": same, "polls_answered": pollers.answered})
                progress(f"restart {n + 1}/{restarts} ({rounds[-1]['stop']}): "
                         f"{took:.2f} s, answers {'the same' if same else 'DIFFER'}")
            log = (data / "redis.log").read_text(errors="replace")
            crashes = max(crashes, log.count("ASSERTION FAILED"))  # a failed start once
        finally:
            if process.poll() is None:
                stop(process, info, clean=True)
    reopened = [r["reopen_s"] for r in rounds if "reopen_s" in r]
    return {"falkordb": version, "agents": agent_count, "events": events + restarts * BETWEEN,
            "events_first": events, "fill_s": filled_s, "restarts": rounds,
            "crashes": crashes, "answers_differ": differ,
            "reopen_median_s": statistics.median(reopened) if reopened else None,
            "reopen_max_s": max(reopened) if reopened else None,
            "machine": {"python": platform.python_version(), "system": platform.system(),
                        "cpus": os.cpu_count()}}


def render(doc: dict, command: str) -> str:
    """The results page."""
    lines = [f"# Restarts of a served memory: FalkorDB {doc['falkordb']}", "",
             f"`{command}` (eval/restarts.py), Python {doc['machine']['python']}, "
             f"{doc['machine']['cpus']} cores. {doc['agents']} agents; {doc['events_first']} "
             f"events written first ({doc['fill_s']:.0f} s), then {BETWEEN} more before each "
             "restart; two clients poll the socket through every start.", "",
             "| | |", "|---|---|",
             f"| restarts | {len(doc['restarts'])} |",
             f"| crashes (a start that failed, or `ASSERTION FAILED` in redis.log) | "
             f"{doc['crashes']} |",
             f"| restarts whose answers differ from before the stop | {doc['answers_differ']} |"]
    if doc["reopen_median_s"] is not None:
        lines.append(f"| reopen, launch to serving: median / max | "
                     f"{doc['reopen_median_s']:.2f} / {doc['reopen_max_s']:.2f} s |")
    lines += ["", "| # | stop | reopen | answers | polls answered |", "|---|---|---|---|---|"]
    for n, r in enumerate(doc["restarts"], 1):
        if "failed" in r:
            lines.append(f"| {n} | {r['stop']} | failed | | |")
        else:
            lines.append(f"| {n} | {r['stop']} | {r['reopen_s']:.2f} s | "
                         f"{'same' if r['same_answers'] else 'DIFFER'} | "
                         f"{r['polls_answered']} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    """Run, write the results, print the page; 0 when nothing crashed or differed."""
    parser = argparse.ArgumentParser(prog="python -m eval.restarts",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--restarts", type=int, default=20)
    parser.add_argument("--agents", type=int, default=5, help="at least 5 (the answers read "
                        "depth-2 beliefs about the fifth)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.agents < 5:
        parser.error("--agents must be at least 5")
    doc = run(args.events, args.restarts, args.agents,
              lambda line: print(line, file=sys.stderr, flush=True))
    command = (f"python -m eval.restarts --events {args.events} --restarts {args.restarts} "
               f"--agents {args.agents}")
    name = "restarts-" + doc["falkordb"].rsplit(".", 1)[0]
    write_results(args.out, name, doc, render(doc, command))
    print(render(doc, command))
    return 0 if doc["crashes"] == 0 and doc["answers_differ"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
