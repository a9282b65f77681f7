"""`python -m eval.lean [--out FILE] [--label NAME]`: the write and read path of issue 27
items 1, 2 and 4 (lean statements, work proportional to the write, reads by id), measured as
ratios to an idle bare round trip taken in the same run just before each section.

One embedded FalkorDB in a temporary folder. Sections (the workload of eval/bench.py):

- **events**: a memory of 5 agents at depth 2, mixed events (`Session.apply`): p50, p99;
- **broadcast**: announcements to every agent of a memory of 16 agents at depth 3;
- **nested read**: `session.believes([a, b], key)` at depth 2 (the events' memory);
- **memory**: used_memory per graph over memories of 1 world + 5 minds after the events
  of eval.workload's scale scenario (`Session.open`), and per 5-agent memory.

The idle round trip is the p50 of bare writes (`CREATE (:X)`) and bare reads, taken before
each section with nothing else running (never right after a broadcast). Prints one JSON
object; with `--out`, appends it to that file as a JSON line labelled `--label`.
`--table FILE` prints the median of each label's runs in FILE as a markdown table (the
committed eval/results/lean.md: runs of the code before and after, taken in turn).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from eval.roundtrips import Baseline, Samples
from eval.workload import (agent_names, broadcasts, depth_policy, mixed_events,
                           scale_scenario, setup_statements)
from tomc.api import Session
from tomc.runtime.connection import Database, connect

IDLE_SAMPLES = 200


class Cpu:
    """CPU seconds of this process and of the FalkorDB server over a block: what an
    operation costs whatever else the machine runs (wall times on a shared machine are
    noisy; these are not)."""

    def __init__(self, db: Database):
        self.db = db

    def __enter__(self) -> "Cpu":
        self.client, self.server = time.process_time(), self._server()
        return self

    def __exit__(self, *exc) -> None:
        self.client = time.process_time() - self.client
        self.server = self._server() - self.server

    def _server(self) -> float:
        info = self.db.redis.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def idle(db: Database) -> Baseline:
    """Bare write and read round trips, back to back, before a section."""
    baseline = Baseline(db)
    for _ in range(IDLE_SAMPLES):
        baseline.sample()
    baseline.drop()
    return baseline


def measure(db: Database, folder: Path, events: int, broadcasts_n: int, reads: int,
            memories: int) -> dict:
    agents = agent_names(5)
    out: dict = {}
    with Session.attach("lean_events", db=db) as session:
        for statement in setup_statements(agents):
            session.apply(statement)
        base = idle(db)
        timed = Samples()
        with Cpu(db) as cpu:
            for text in mixed_events(agents, events):
                timed.time(lambda: session.apply(text))
        out.update(event_client_cpu_ms=cpu.client * 1000 / events,
                   event_server_cpu_ms=cpu.server * 1000 / events)
        rt = base.writes.p(50)
        out.update(idle_write_ms=rt, idle_read_ms=base.reads.p(50),
                   event_p50_ms=timed.p(50), event_p99_ms=timed.p(99),
                   event_p50_over_idle=timed.p(50) / rt, event_p99_over_idle=timed.p(99) / rt)
        base = idle(db)
        samples = Samples()
        with Cpu(db) as cpu:
            for i in range(reads):
                samples.time(lambda: session.believes(agents[:2], f"ticket{i % 10}.status"))
        out.update(read_server_cpu_ms=cpu.server * 1000 / reads)
        out.update(nested_read_p50_ms=samples.p(50),
                   nested_read_over_idle_read=samples.p(50) / base.reads.p(50))
    names = agent_names(16)
    with Session.attach("lean_broadcast", db=db,
                        policy=str(depth_policy(folder, 3))) as session:
        for statement in setup_statements(names):
            session.apply(statement)
        base = idle(db)
        timed = Samples()
        with Cpu(db) as cpu:
            for text in broadcasts(names, broadcasts_n):
                timed.time(lambda: session.apply(text))
        out.update(broadcast_client_cpu_ms=cpu.client * 1000 / broadcasts_n,
                   broadcast_server_cpu_ms=cpu.server * 1000 / broadcasts_n)
        out.update(broadcast_16x3_p50_ms=timed.p(50),
                   broadcast_16x3_over_idle=timed.p(50) / base.writes.p(50))
    before, graphs = _used(db), len(db.graph_names())
    path = folder / "scale.tom"
    for n in range(memories):
        path.write_text(scale_scenario(f"lean{n}", agents), encoding="utf-8")
        Session.open(path, db=db).close()
    added = len(db.graph_names()) - graphs
    used = _used(db) - before
    out.update(bytes_per_graph=used / added, bytes_per_5_agent_memory=used / memories)
    return out


def _used(db: Database) -> int:
    return int(db.redis.info("memory")["used_memory"])


ROWS = [("event p50 / idle write", "event_p50_over_idle", "x"),
        ("event p99 / idle write", "event_p99_over_idle", "x"),
        ("event p50", "event_p50_ms", "ms"),
        ("event CPU, client / server", ("event_client_cpu_ms", "event_server_cpu_ms"), "ms"),
        ("broadcast 16x3 p50 / idle write", "broadcast_16x3_over_idle", "x"),
        ("broadcast 16x3 p50", "broadcast_16x3_p50_ms", "ms"),
        ("broadcast CPU, client / server", ("broadcast_client_cpu_ms",
                                            "broadcast_server_cpu_ms"), "ms"),
        ("nested read p50 / idle read", "nested_read_over_idle_read", "x"),
        ("nested read p50", "nested_read_p50_ms", "ms"),
        ("nested read server CPU", "read_server_cpu_ms", "ms"),
        ("memory per graph", "bytes_per_graph", "KB"),
        ("memory per 5-agent memory", "bytes_per_5_agent_memory", "KB"),
        ("idle write round trip", "idle_write_ms", "ms")]


def table(runs: list[dict]) -> str:
    """Markdown: one column per label (in order of appearance), the median of its runs."""
    labels = list(dict.fromkeys(r["label"] for r in runs))
    lines = ["| measure | " + " | ".join(f"{label} ({sum(r['label'] == label for r in runs)} "
                                         "runs)" for label in labels) + " |",
             "|---|" + "---|" * len(labels)]
    for title, key, unit in ROWS:
        cells = []
        for label in labels:
            mine = [r for r in runs if r["label"] == label]
            values = [statistics.median(r[k] for r in mine)
                      for k in (key if isinstance(key, tuple) else (key,))]
            cells.append(" / ".join(f"{v / 1024:.0f} KB" if unit == "KB" else f"{v:.2f}"
                                    for v in values) + ("" if unit == "KB" else f" {unit}"))
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.lean")
    parser.add_argument("--table")
    parser.add_argument("--out")
    parser.add_argument("--label", default="run")
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--broadcasts", type=int, default=12)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--memories", type=int, default=60)
    args = parser.parse_args(argv)
    if args.table:
        with open(args.table, encoding="utf-8") as runs:
            print(table([json.loads(line) for line in runs if line.strip()]))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        with connect(None, Path(folder) / "data") as db:
            found = measure(db, Path(folder), args.events, args.broadcasts, args.reads,
                            args.memories)
    found = {"label": args.label, **{k: round(v, 3) for k, v in found.items()}}
    print(json.dumps(found))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as out:
            out.write(json.dumps(found) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
