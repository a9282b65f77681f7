"""How long an agent holding only its own credential can hold anyone else (issue 35: "worst
server stall caused by an agent's credential under 1 s").

    python -m eval.agent_stall [--events 5000] [--seconds 10] [--out DIR]

On a fresh embedded FalkorDB of its own, `tomc serve`'s appliers run in a thread; one memory
holds five agents in a room and EVENTS events said there (so Maya's mind graph and her view
hold them all). Then, for SECONDS each, Maya's user (`tomc token credential`: tomc/memory/
acl.py) does the worst of what it may, from two threads at once:

- `query`: a runaway Cypher query on her own mind graph (refused: her user runs no query);
- `reads`: her own session's heaviest questions, each run by the applier (every belief of
  every chain of hers, and a search: tomc/memory/served_reads.py);
- `view`: her whole view read a page at a time (the events she witnessed), as her session
  reads it when it attaches;
- `flood`: 1 KB entries pushed on her queue as fast as she can, each with a ring of the
  memory's bell, and LREM on it (the applier takes a few of hers in each batch and drops
  what waits past her queue's bound: tomc/memory/applier.py);

while the administrator's probes measure, as a caller sees them, a PING every 10 ms and a
write into Maya's mind (Billing says, in her room) every 100 ms. The same probes run with
no attack first (`idle`). Writes agent-stall.json and agent-stall.md: per attack, each
probe's median, p99 and worst; the worst of all is the figure docs/security.md quotes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import redis

from eval.results_files import DEFAULT_OUT, write_results
from tomc.api import Session
from tomc.memory import acl, agent_view, submit
from tomc.memory.applier import serve_appliers
from tomc.memory.catalog import memory_graphs
from tomc.runtime.connection import Database, connect, from_socket
from tomc.runtime.keys import appliers_key, memory_key

NAME = "stall"
AGENTS = ["Maya", "Billing", "Finance", "Ops", "Lee"]
RUNAWAY = "UNWIND range(1, 300000000) AS x RETURN count(x)"


def build(db: Database, events: int) -> None:
    """The memory: five agents in one room, `events` says by each in turn (200 keys)."""
    with Session.attach(NAME, db=db) as s:
        s.apply(f"agents {', '.join(AGENTS)}\nrooms chat\n{', '.join(AGENTS)} enter chat")
        done = 0
        while done < events:
            lines = [f"{AGENTS[n % 5]} says topic.k{n % 200} = v{n}"
                     for n in range(done, min(done + 100, events))]
            s.apply("\n".join(lines))
            done += len(lines)
            if done % 1000 == 0:
                print(f"built {done}/{events} events", file=sys.stderr)


def attacks(maya_url: str, maya: Database, server_socket: str) -> dict[str, Callable]:
    """Each attack: a function Maya's threads call in a loop (one call, one round)."""
    graphs = memory_graphs(NAME, AGENTS)
    sessions = threading.local()

    def query() -> None:
        try:
            maya.redis.execute_command("GRAPH.RO_QUERY", graphs.mind("Maya"), RUNAWAY)
        except redis.exceptions.NoPermissionError:
            pass

    def reads() -> None:
        if not hasattr(sessions, "s"):
            sessions.s = Session.attach(NAME, db=maya_url, as_agent="Maya")
        sessions.s.beliefs("Maya")
        sessions.s.search("topic")

    def view() -> None:
        for key in (agent_view.seen_key(graphs, "Maya"), agent_view.public_key(graphs)):
            list(maya.redis.hscan_iter(key, count=10_000))  # a COUNT larger than tomc's

    user = maya.redis.connection_pool.connection_kwargs["username"]

    def flood() -> None:
        queue = submit.queue_of(NAME, user)  # the only queue her user may push on
        pipe = maya.redis.pipeline(transaction=False)
        for _ in range(200):
            pipe.rpush(queue, "x" * 1024)
            pipe.rpush(memory_key(NAME, "bell"), "")
        submit.wake(pipe, NAME)
        pipe.lrem(queue, 1, "nothing of the kind")
        try:
            pipe.execute()
        except redis.exceptions.OutOfMemoryError:
            pass

    return {"query": query, "reads": reads, "view": view, "flood": flood}


def measure(admin: Database, seconds: float, attack: Callable | None) -> dict:
    """The probes' latencies (ms) for `seconds`, with `attack` looping in two threads."""
    stop = threading.Event()
    rounds = [0]
    errors: list[str] = []

    def attacker() -> None:
        while not stop.is_set():
            try:
                attack()
                rounds[0] += 1
            except Exception as err:  # noqa: BLE001 (counted, shown)
                errors.append(f"{type(err).__name__}: {err}"[:200])
                time.sleep(0.01)

    threads = [threading.Thread(target=attacker) for _ in range(2 if attack else 0)]
    for t in threads:
        t.start()
    pings, writes = [], []

    def pinger() -> None:
        while not stop.is_set():
            start = time.perf_counter()
            admin.redis.ping()
            pings.append((time.perf_counter() - start) * 1000)
            time.sleep(0.01)

    probe = threading.Thread(target=pinger)
    probe.start()
    n = 0
    deadline = time.monotonic() + seconds
    with Session.attach(NAME, db=admin) as s:
        while time.monotonic() < deadline:
            n += 1
            start = time.perf_counter()
            s.apply(f"Billing says probe.k = p{n}")
            writes.append((time.perf_counter() - start) * 1000)
            time.sleep(0.1)
    stop.set()
    for t in [*threads, probe]:
        t.join()
    return {"ping_ms": _summary(pings), "write_ms": _summary(writes),
            "attack_rounds": rounds[0], "attack_errors": sorted(set(errors))[:5]}


def _summary(values: list[float]) -> dict:
    ordered = sorted(values)
    return {"n": len(ordered), "median": round(statistics.median(ordered), 2),
            "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
            "worst": round(ordered[-1], 2)}


def run(folder: Path, events: int, seconds: float) -> dict:
    with connect(None, folder) as db:
        stop = threading.Event()
        thread = threading.Thread(target=serve_appliers, args=(db, stop, 2), daemon=True)
        thread.start()
        try:
            while not db.redis.exists(appliers_key()):
                time.sleep(0.05)
            started = time.perf_counter()
            build(db, events)
            built_s = time.perf_counter() - started
            user, password = acl.grant(db, memory_graphs(NAME, AGENTS), "Maya")
            socket = db.redis.connection_pool.connection_kwargs["path"]
            maya = from_socket(socket, user, password, check_graphs=False)
            maya_url = f"unix://{user}:{password}@{socket}"
            found = {"idle": measure(db, seconds, None)}
            for name, attack in attacks(maya_url, maya, socket).items():
                print(f"attack {name}", file=sys.stderr)
                found[name] = measure(db, seconds, attack)
                db.redis.delete(submit.queue_of(NAME, maya.redis.connection_pool
                                                .connection_kwargs["username"]))
            maya.close()
        finally:
            stop.set()
            thread.join(timeout=10)
    worst = max(max(r["ping_ms"]["worst"], r["write_ms"]["worst"])
                for k, r in found.items() if k != "idle")
    return {"events": events, "seconds_each": seconds, "build_s": round(built_s, 1),
            "results": found, "worst_stall_ms": worst}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        found = run(Path(tmp) / "data", args.events, args.seconds)
    lines = ["# What an agent's own credential can hold (eval/agent_stall.py)", "",
             f"A memory of {found['events']:,} events (5 agents, one room); each attack "
             f"{found['seconds_each']:g} s from two of Maya's threads, while the "
             "administrator PINGs every 10 ms and writes into Maya's mind every 100 ms. "
             "Milliseconds, as the caller sees them.", "",
             "| attack | rounds | PING median / p99 / worst | write median / p99 / worst |",
             "|---|---|---|---|"]
    for name, r in found["results"].items():
        p, w = r["ping_ms"], r["write_ms"]
        lines.append(f"| {name} | {r['attack_rounds']:,} | {p['median']} / {p['p99']} / "
                     f"{p['worst']} | {w['median']} / {w['p99']} / {w['worst']} |")
    lines += ["", f"Worst stall under an attack: {found['worst_stall_ms']} ms."]
    write_results(args.out, "agent-stall", found, "\n".join(lines))
    print("\n".join(lines))
    return 0 if found["worst_stall_ms"] < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
