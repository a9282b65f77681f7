"""`python -m eval.cluster [--events N] [--out DIR]`: a memory on a FalkorDB cluster against
one server, in the same run (issue 22; docs/deployment.md).

Starts, on loopback, one FalkorDB server and a cluster of 3 masters + 3 replicas with the
same settings (AOF, fsync everysec; eval/local_cluster.py), then measures:

- event latency: one writer applies N events to a memory (`Session.apply`, one statement
  each), p50 and p95, on the single server, on the cluster, and on the cluster with
  `wait_replicas=1` (WAIT after each commit); ratios against the single server;
- spread: which master serves each of 300 memories (their hash tags' slots);
- failover: a writer commits with `wait_replicas=1` while the master of its memory is
  killed with -9: seconds until a replica is promoted, until the writer commits again, and
  how many acknowledged events are missing (or doubled) afterwards;
- a move: a writer commits on one session while its memory's slot is moved to another
  master (SETSLOT IMPORTING/MIGRATING, MIGRATE a key at a time, SETSLOT NODE): events
  acknowledged during the move, calls that failed, the longest gap between two acknowledged
  events, missing and doubled ones;
- throughput: 8 writer processes, each on a memory of its own, for SECONDS seconds, on the
  single server and on the cluster (events per second over all): on a 2-CPU machine the
  writers' own CPU bounds both, so this shows what a cluster costs, not how it scales.

Writes cluster.json and cluster.md into --out (default eval/out; `--out eval/results`
replaces the committed results).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Optional

from redis.crc import key_slot

from eval.local_cluster import LocalCluster
from eval.results_files import DEFAULT_OUT, write_results
from tomc.api import Session
from tomc.memory import catalog
from tomc.runtime.keys import memory_key
from tomc.runtime.connection import connect
from tomc.runtime.errors import DatabaseUnavailable

SETUP = "agents Maya, Billing, Finance\nrooms chat, ops\nMaya, Billing enter chat"


def events(count: int) -> list[str]:
    """`count` events that are valid in any order after SETUP."""
    kinds = ["Billing tells Maya ticket{i}.status = s{i}", "Maya sets note{j}.text = v{i}",
             "Billing says refund.status = r{i}", "Finance sets ledger{j}.total = t{i}"]
    return [kinds[i % 4].format(i=i, j=i % 5) for i in range(count)]


def latency(url: str, name: str, count: int) -> dict:
    """p50/p95 milliseconds of `count` applies to a fresh memory at `url`."""
    with connect(url) as db:
        catalog.drop(db, name)
        with Session.attach(name, db=db) as live:
            live.apply(SETUP)
            times = []
            for text in events(count):
                started = time.perf_counter()
                live.apply(text)
                times.append((time.perf_counter() - started) * 1000)
        catalog.drop(db, name)
    times.sort()
    return {"events": count, "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(len(times) * 0.95) - 1], 2)}


def spread(nodes: LocalCluster, count: int = 300) -> list[int]:
    """How many of `count` memories each master serves (by their hash tags' slots)."""
    masters = Counter(nodes.master_of(memory_key(f"m{i}", "world"))
                      for i in range(count))
    return sorted(masters.values(), reverse=True)


def failover(nodes: LocalCluster) -> dict:
    """kill -9 the master of a memory being written with wait_replicas=1."""
    url, name = nodes.url + "?wait_replicas=1", "failover"
    with connect(url) as db, Session.attach(name, db=db) as live:
        live.apply("agents A")
    master = nodes.master_of(memory_key(name, "world"))
    acked: list[tuple[int, float]] = []
    failed: list[float] = []  # when the writer got DatabaseUnavailable
    stop = threading.Event()

    def write() -> None:
        n = 0
        with connect(url) as db:
            while not stop.is_set():
                try:
                    with Session.attach(name, db=db) as live:
                        while not stop.is_set():
                            n += 1
                            live.apply(f"A sets k{n % 3}.s = v{n}")
                            acked.append((n, time.monotonic()))
                except DatabaseUnavailable:
                    failed.append(time.monotonic())
                    time.sleep(0.05)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 50:
            time.sleep(0.02)
        killed = time.monotonic()
        nodes.kill(master)
        promoted = nodes.wait_promoted(master)
        promoted_s = time.monotonic() - killed
        nodes.start_node(master)  # rejoins as the new master's replica: WAIT 1 can succeed
        # Resumed: the first event acknowledged after the writer's first failure.
        while not failed or not [t for _, t in acked if t > failed[0]]:
            if time.monotonic() - killed > 120:
                raise RuntimeError("writes did not resume within 120 s")
            time.sleep(0.02)
        resumed_s = min(t for _, t in acked if t > failed[0]) - killed
        while len(acked) < 150:
            time.sleep(0.02)
    finally:
        stop.set()
        writer.join()
    with connect(nodes.url) as db, Session.attach(name, db=db) as reader:
        values = Counter(e.text.rsplit("= v", 1)[1] for e in reader.history() if "= v" in e.text)
    return {"promoted": promoted is not None, "promoted_s": round(promoted_s, 1),
            "writes_resumed_s": round(resumed_s, 1), "acknowledged": len(acked),
            "missing": sum(1 for n, _ in acked if values[str(n)] == 0),
            "doubled": sum(1 for v in values.values() if v > 1)}


def moved(nodes: LocalCluster) -> dict:
    """A writer's session while its memory's slot is moved to another master."""
    name = "moving"
    with Session.attach(name, db=nodes.url) as setup:
        setup.apply("agents A")
    home = nodes.master_of(memory_key(name))
    away = next(p for p in nodes.ports[:nodes.masters] if p != home)
    acked: list[tuple[int, float]] = []
    failed: list[str] = []
    stop = threading.Event()

    def write() -> None:
        n = 0
        with Session.attach(name, db=nodes.url) as live:
            while not stop.is_set():
                n += 1
                try:
                    live.apply(f"A sets k.s = v{n}")
                    acked.append((n, time.monotonic()))
                except DatabaseUnavailable as err:
                    failed.append(str(err))

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 20:
            time.sleep(0.02)
        started = time.monotonic()
        nodes.move_slot(key_slot(memory_key(name).encode()), away, batch=1, pause_s=0.1)
        ended = time.monotonic()
        time.sleep(1)
    finally:
        stop.set()
        writer.join()
    with Session.attach(name, db=nodes.url) as reader:
        values = Counter(e.text.rsplit("= v", 1)[1] for e in reader.history() if "= v" in e.text)
    times = [t for _, t in acked]
    gap = max(b - a for a, b in zip(times, times[1:]) if b >= started and a <= ended + 1)
    return {"move_s": round(ended - started, 2),
            "acknowledged_during": sum(1 for t in times if started <= t <= ended),
            "failed": len(failed), "longest_gap_s": round(gap, 3),
            "missing": sum(1 for n, _ in acked if values[str(n)] == 0),
            "doubled": sum(1 for v in values.values() if v > 1)}


# One writer process of `throughput`: its own memory, events for the seconds given.
WRITER = """
import sys, time
from tomc.api import Session
url, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
with Session.attach(name, db=url) as live:
    live.apply("agents A, B")
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
        live.apply(f"A sets k{n % 7}.s = v{n}")
print(n)
"""


def throughput(url: str, writers: int = 8, seconds: float = 10.0) -> dict:
    """Events per second of `writers` processes, each on a memory of its own."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, f"tp{i}", str(seconds)],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.getcwd()})
             for i in range(writers)]
    counts = [int(p.communicate(timeout=seconds + 120)[0].strip() or 0) for p in procs]
    return {"writers": writers, "seconds": seconds, "events": sum(counts),
            "per_s": round(sum(counts) / seconds, 1)}


def run(count: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        single = LocalCluster(Path(tmp) / "single", masters=1, cluster=False).start()
        nodes = LocalCluster(Path(tmp) / "cluster", masters=3, replicas=1).start()
        try:
            rows = {"single server": latency(single.url, "bench_latency", count),
                    "cluster": latency(nodes.url, "bench_latency", count),
                    "cluster, wait_replicas=1": latency(nodes.url + "?wait_replicas=1",
                                                        "bench_latency", count)}
            base = rows["single server"]["p50_ms"]
            for row in rows.values():
                row["over_single"] = round(row["p50_ms"] / base, 2)
            flows = {"single server": throughput(single.url), "cluster": throughput(nodes.url)}
            flows["cluster"]["over_single"] = round(
                flows["cluster"]["per_s"] / flows["single server"]["per_s"], 2)
            return {"latency": rows, "spread_300": spread(nodes), "throughput": flows,
                    "move": moved(nodes), "failover": failover(nodes)}
        finally:
            single.stop()
            nodes.stop()


def render_markdown(document: dict) -> str:
    lines = ["# A memory on a FalkorDB cluster against one server", "",
             "Generated by `python -m eval.cluster`: one FalkorDB server and a cluster of 3 "
             "masters + 3 replicas on loopback TCP, same settings (AOF, fsync everysec), in "
             "the same run, on a shared 2-CPU machine. One writer applies "
             f"{document['latency']['single server']['events']} events, one statement per "
             "`apply`.", "",
             "| where | events | p50 ms | p95 ms | p50 over one server |", "|---|---|---|---|---|"]
    for where, row in document["latency"].items():
        lines.append(f"| {where} | {row['events']} | {row['p50_ms']} | {row['p95_ms']} | "
                     f"{row['over_single']:.2f}x |")
    f = document["failover"]
    lines += ["", f"Spread: 300 memories over the 3 masters: "
              f"{'/'.join(str(n) for n in document['spread_300'])}.", "",
              "Failover (cluster-node-timeout 2 s): the master of a memory killed with -9 "
              f"while one writer commits with `wait_replicas=1`: replica promoted after "
              f"{f['promoted_s']} s, writes resumed after {f['writes_resumed_s']} s (a commit "
              "is acknowledged once a replica has it: the promoted master had none until the "
              "killed node, restarted at once, rejoined as its replica; meanwhile each commit "
              "waited out WAIT's 5 s and was reported unacknowledged); "
              f"{f['acknowledged']} events acknowledged, {f['missing']} missing, "
              f"{f['doubled']} doubled.", ""]
    m = document["move"]
    lines += [f"A move: the slot of a memory moved to another master (a key at a time, "
              f"0.1 s between keys) in {m['move_s']} s while one writer commits on one "
              f"session: {m['acknowledged_during']} events acknowledged during the move, "
              f"{m['failed']} calls failed, longest gap between two acknowledgements "
              f"{m['longest_gap_s']} s; {m['missing']} missing, {m['doubled']} doubled.", ""]
    t = document["throughput"]
    lines += ["Throughput: 8 writer processes, each on a memory of its own, for "
              f"{t['cluster']['seconds']:g} s: {t['single server']['per_s']} events/s on the "
              f"single server, {t['cluster']['per_s']} on the cluster "
              f"({t['cluster']['over_single']:.2f}x). The writers' own CPU (compiling each "
              "event) bounds both on 2 cores: this shows what the cluster costs, not how it "
              "scales with masters.", ""]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.cluster", description=__doc__)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    document = run(args.events)
    write_results(args.out, "cluster", document, render_markdown(document))
    print(render_markdown(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
