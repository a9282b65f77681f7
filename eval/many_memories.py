"""A thousand memories on one `tomc serve` (issue 35: "the 1,000th memory's first write as
fast as the first's, within 1.5x; idle cost under 100 commands a second in all").

    python -m eval.many_memories [--memories 1000] [--out DIR]

On a fresh embedded FalkorDB of its own, `tomc serve`'s appliers (tomc/memory/applier.py
`serve_appliers`) in a thread: MEMORIES memories are created through them (three agents in a
room each), then the appliers are started again (nothing warm), and each memory gets its
first write since: one event submitted as `tomc memory apply` submits it (tomc/runtime/
submit.py), timed from the push to the reply, in memory order. Then, with every memory
idle, the commands the server runs in 10 s (INFO stats), per second. Writes
many-memories.json and many-memories.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from eval.results_files import DEFAULT_OUT, write_results
from tomc.memory.applier import WARM, WORKERS, serve_appliers
from tomc.runtime.keys import appliers_key
from tomc.memory import submit
from tomc.runtime.connection import Database, connect

SETUP = "agents A, B, C\nrooms r\nA, B, C enter r"


def _serving(db: Database) -> tuple[threading.Event, threading.Thread]:
    db.redis.delete(appliers_key())
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(db, stop), daemon=True)
    thread.start()
    while not db.redis.exists(appliers_key()):
        time.sleep(0.05)
    return stop, thread


def _write(db: Database, name: str, text: str, create: str | None = None) -> float:
    started = time.perf_counter()
    reply = submit.submit(db.redis, name, text, uuid.uuid4().hex, create=create)
    if reply.get("error"):
        raise RuntimeError(f"{name}: {reply}")
    return time.perf_counter() - started


def _commands(db: Database) -> int:
    return int(db.redis.info("stats")["total_commands_processed"])


def run(db: Database, memories: int) -> dict:
    names = [f"m{i:04d}" for i in range(memories)]
    stop, thread = _serving(db)
    started = time.perf_counter()
    for i, name in enumerate(names):
        _write(db, name, SETUP, create="default")
        if (i + 1) % 100 == 0:
            print(f"created {i + 1}/{memories}", file=sys.stderr)
    created_s = time.perf_counter() - started
    stop.set()
    thread.join()
    stop, thread = _serving(db)  # nothing warm: every write below is its memory's first
    try:
        firsts = []
        for i, name in enumerate(names):
            firsts.append(_write(db, name, f"A says note.n = {i}"))
        time.sleep(1)  # the last write's drain lingers 0.2 s for a next request
        before, at = _commands(db), time.perf_counter()
        time.sleep(10)
        idle = (_commands(db) - before - 1) / (time.perf_counter() - at)
        again = [_write(db, name, "B says note.m = 1") for name in (names[0], names[-1])]
    finally:
        stop.set()
        thread.join()
    head, tail = firsts[:20], firsts[-20:]
    return {"memories": memories, "workers": WORKERS, "warm": WARM,
            "create_s": round(created_s, 1),
            "first_write_ms": {"first": round(firsts[0] * 1000, 2),
                               "last": round(firsts[-1] * 1000, 2),
                               "median_first_20": round(statistics.median(head) * 1000, 2),
                               "median_last_20": round(statistics.median(tail) * 1000, 2),
                               "median_all": round(statistics.median(firsts) * 1000, 2)},
            "last_over_first": round(statistics.median(tail) / statistics.median(head), 2),
            "idle_commands_per_s": round(idle, 1),
            "second_write_ms": [round(x * 1000, 2) for x in again]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, connect(None, Path(tmp) / "data") as db:
        found = run(db, args.memories)
    w = found["first_write_ms"]
    lines = ["# A thousand memories on one `tomc serve` (eval/many_memories.py)", "",
             f"{found['memories']:,} memories, each created through the appliers; the "
             f"appliers started again (nothing warm; {found['workers']} workers, "
             f"{found['warm']} kept warm); then each memory's first write since, in order.",
             "", "| | |", "|---|---|",
             f"| creating them all | {found['create_s']} s |",
             f"| first write, memory 1 / memory {found['memories']:,} | {w['first']} / "
             f"{w['last']} ms |",
             f"| first write, median of the first 20 / last 20 memories | "
             f"{w['median_first_20']} / {w['median_last_20']} ms "
             f"(x{found['last_over_first']}) |",
             f"| commands a second, all idle | {found['idle_commands_per_s']} |",
             f"| a second write, memory 1 / memory {found['memories']:,} | "
             f"{found['second_write_ms'][0]} / {found['second_write_ms'][1]} ms |"]
    write_results(args.out, "many-memories", found, "\n".join(lines))
    print("\n".join(lines))
    return 0 if found["last_over_first"] <= 1.5 and found["idle_commands_per_s"] < 100 else 1


if __name__ == "__main__":
    sys.exit(main())
