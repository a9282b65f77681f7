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
  how many acknowledged events are missing (or doubled) afterwards.

Writes cluster.json and cluster.md into --out (default eval/out; `--out eval/results`
replaces the committed results).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Optional

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
            return {"latency": rows, "spread_300": spread(nodes), "failover": failover(nodes)}
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
