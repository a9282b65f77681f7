"""A memory that lives a long time (issue 34): what an event, an announcement, a belief read,
an attach and a reopen cost as one memory grows, and the server memory each event keeps.

    python -m eval.longlived [--agents 5,50] [--events 100000] [--points 1000,...] [--out DIR]

On a fresh embedded FalkorDB of its own (the one `tomc serve` starts: unix socket, AOF
everysec), one memory per agent count: AGENTS agents in one room, then the mixed workload
of eval/workload.py (enter, exit, move, tell, announce, claim), written in groups of 20
statements as fast as the server takes them. At each point (events so far), measured on the
memory as it is, each figure the median of its samples:

- **event**: one mixed event through `Session.apply` (30 samples);
- **announcement**: `A announces note.text = v` to the room (10 samples);
- **read depth 1 / 2**: `believes(A, key)` and `believes([A, B], key)` (50 samples each);
- **attach**: `Session.attach` of the memory by a new session, then its first read (best of
  3);
- **memory per event**: the server's used memory over what it used once the agents were
  declared, divided by the events so far;
- **reopen**: the server stopped cleanly (`SHUTDOWN`, after the AOF is compacted) and
  started again until it serves, and the same after kill -9 (the AOF's log replayed);
- **bare round trip**: a one-node write on a scratch graph (eval/roundtrips.py), the same
  minutes' yardstick.

Each figure is also given over its value at the first point (the goals of issue 34: event,
announcement and depth-2 read within 1.5x, attach within 3x and under 1 s, at most 3 KB of
server memory per event). Writes longlived.json, longlived.md and, when matplotlib is
installed (the `bench` extra), longlived.png with the curves.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from eval.results_files import DEFAULT_OUT, write_results
from eval.roundtrips import idle_baseline
from eval.workload import agent_names, mixed_events, setup_statements
from tomc.api import Session
from tomc.runtime.connection import Database, from_socket
from tomc.runtime.server import EmbeddedServer

NAME = "lasting"
GROUP = 20  # statements per write while filling
KB = 1024
GOALS = {"event_growth": 1.5, "announce_growth": 1.5, "read2_growth": 1.5,
         "attach_growth": 3.0, "attach_s": 1.0, "bytes_per_event": 3 * KB}


def _median_ms(action: Callable[[], object], samples: int) -> float:
    took = []
    for _ in range(samples):
        started = time.perf_counter()
        action()
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


class Lifetime:
    """One memory on a server of its own, filled point by point."""

    def __init__(self, folder: Path, agents: int, seed: int = 31):
        self.folder, self.names = folder, agent_names(agents)
        self.server = EmbeddedServer(folder).start()
        self.db = self._connect()
        self.session = Session.attach(NAME, db=self.db)
        for statement in setup_statements(self.names):
            self.session.apply(statement)
        self.empty = self._used()
        self.texts = mixed_events(self.names, 10**9, seed=seed)
        self.events = 0
        self.notes = 0

    def _connect(self) -> Database:
        return from_socket(self.server.socket_path, password=self.server.secret)

    def _used(self) -> int:
        return int(self.db.redis.info("memory")["used_memory"])

    def fill(self, until: int, progress: Callable[[str], None]) -> None:
        """Apply workload events until `until` events were written."""
        while self.events < until:
            count = min(GROUP, until - self.events)
            self.session.apply("\n".join(next(self.texts) for _ in range(count)))
            self.events += count
            if self.events % 5000 < count:
                progress(f"{len(self.names)} agents: {self.events} events")

    def point(self) -> dict:
        """Every figure, on the memory as it is now."""
        a, b = self.names[0], self.names[1]
        baseline = idle_baseline(self.db)

        def event():
            self.session.apply(next(self.texts))
            self.events += 1

        def announce():
            self.notes += 1
            self.session.apply(f"{self.names[self.notes % len(self.names)]} announces "
                               f"note{self.notes % 3}.text = v{self.notes % 4}")
            self.events += 1

        found = {"bare_write_ms": baseline.writes.p(50),
                 "event_ms": _median_ms(event, 30),
                 "announce_ms": _median_ms(announce, 10),
                 "read1_ms": _median_ms(lambda: self.session.believes(a, "ticket0.status"), 50),
                 "read2_ms": _median_ms(
                     lambda: self.session.believes([a, b], "ticket0.status"), 50),
                 "attach_s": min(self._attach() for _ in range(3)),
                 "bytes_per_event": (self._used() - self.empty) / self.events}
        found.update(self._reopen())
        found["events"] = self.events
        return found

    def _attach(self) -> float:
        started = time.perf_counter()
        with Session.attach(NAME, db=self.db, create=False) as other:
            other.believes(self.names[0], "ticket0.status")
        return time.perf_counter() - started

    def _reopen(self) -> dict:
        """Seconds until the server serves again: after a clean stop, after kill -9."""
        self.session.close()
        self.db.close()
        took = {}
        for how in ("clean", "killed"):
            if how == "clean":
                self.server.stop()
            else:
                os.kill(self.server.process.pid, signal.SIGKILL)
                self.server.process.wait()
                self.server.stop()  # releases the folder's lock
            started = time.perf_counter()
            self.server = EmbeddedServer(self.folder).start()
            took[f"reopen_{how}_s"] = time.perf_counter() - started
        self.db = self._connect()
        self.session = Session.attach(NAME, db=self.db, create=False)
        return took

    def close(self) -> None:
        self.session.close()
        self.db.close()
        self.server.stop()


def measure(agents: int, points: list[int], progress: Callable[[str], None]) -> dict:
    """The figures of one memory of `agents` agents at each of `points` (events)."""
    found = []
    with tempfile.TemporaryDirectory(prefix="tomc-longlived-") as folder:
        life = Lifetime(Path(folder) / "data", agents)
        try:
            for point in points:
                life.fill(point, progress)
                found.append(life.point())
                progress(f"{agents} agents at {life.events} events: "
                         f"event {found[-1]['event_ms']:.2f} ms, "
                         f"read {found[-1]['read2_ms']:.2f} ms, "
                         f"attach {found[-1]['attach_s']:.2f} s")
        finally:
            life.close()
    first, last = found[0], found[-1]
    return {"agents": agents, "points": found,
            "event_growth": last["event_ms"] / first["event_ms"],
            "announce_growth": last["announce_ms"] / first["announce_ms"],
            "read2_growth": last["read2_ms"] / first["read2_ms"],
            "attach_growth": last["attach_s"] / first["attach_s"],
            "attach_s": last["attach_s"], "bytes_per_event": last["bytes_per_event"]}


def run(agent_counts: list[int], points: dict[int, list[int]],
        progress: Callable[[str], None] = lambda line: None) -> dict:
    return {"memories": [measure(n, points[n], progress) for n in agent_counts],
            "goals": GOALS,
            "machine": {"python": platform.python_version(), "system": platform.system(),
                        "cpus": os.cpu_count()}}


def _met(memory: dict, key: str) -> str:
    return "met" if memory[key] <= GOALS[key] else "not met"


def render(document: dict, command: str, plot: Optional[str]) -> str:
    lines = ["# A memory that lasts: costs as one memory grows", "",
             f"`{command}` (eval/longlived.py), one embedded FalkorDB per memory, "
             f"Python {document['machine']['python']}, {document['machine']['cpus']} cores. "
             "Each figure is a median at that point; growth is its value at the last point "
             "over the first (issue 34's goals beside it).", ""]
    for memory in document["memories"]:
        lines += [f"## {memory['agents']} agents", "",
                  "| goal | value | goal | |", "|---|---|---|---|",
                  f"| event, last over first | {memory['event_growth']:.2f}x | 1.5x | "
                  f"{_met(memory, 'event_growth')} |",
                  f"| announcement, last over first | {memory['announce_growth']:.2f}x | 1.5x | "
                  f"{_met(memory, 'announce_growth')} |",
                  f"| depth-2 read, last over first | {memory['read2_growth']:.2f}x | 1.5x | "
                  f"{_met(memory, 'read2_growth')} |",
                  f"| attach, last over first | {memory['attach_growth']:.2f}x | 3x | "
                  f"{_met(memory, 'attach_growth')} |",
                  f"| attach at the last point | {memory['attach_s']:.2f} s | 1 s | "
                  f"{_met(memory, 'attach_s')} |",
                  f"| server memory per event | {memory['bytes_per_event'] / KB:.1f} KB | 3 KB | "
                  f"{_met(memory, 'bytes_per_event')} |", "",
                  "| events | event | announcement | read d1 | read d2 | attach | memory/event "
                  "| reopen (clean / kill -9) | bare write |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {p['events']} | {p['event_ms']:.2f} ms | {p['announce_ms']:.2f} ms | "
                  f"{p['read1_ms']:.2f} ms | {p['read2_ms']:.2f} ms | {p['attach_s']:.2f} s | "
                  f"{p['bytes_per_event'] / KB:.1f} KB | {p['reopen_clean_s']:.2f} / "
                  f"{p['reopen_killed_s']:.2f} s | {p['bare_write_ms']:.2f} ms |"
                  for p in memory["points"]]
        lines.append("")
    if plot:
        lines += [f"![the curves]({plot})", ""]
    return "\n".join(lines)


def plot(document: dict, path: Path) -> bool:
    """The curves as a PNG; False when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = [("event_ms", "event (ms)"), ("announce_ms", "announcement (ms)"),
              ("read2_ms", "depth-2 read (ms)"), ("attach_s", "attach (s)"),
              ("bytes_per_event", "memory per event (bytes)"), ("reopen_killed_s",
                                                                "reopen after kill -9 (s)")]
    figure, axes = plt.subplots(2, 3, figsize=(13, 7))
    for axis, (key, title) in zip(axes.flat, panels):
        for memory in document["memories"]:
            xs = [p["events"] for p in memory["points"]]
            axis.plot(xs, [p[key] for p in memory["points"]], marker="o",
                      label=f"{memory['agents']} agents")
        axis.set_title(title)
        axis.set_xscale("log")
        axis.set_xlabel("events")
        axis.set_ylim(bottom=0)
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return True


def _points(text: str, events: int) -> list[int]:
    points = [int(p) for p in text.split(",")] if text else \
        [p for p in (1000, 2000, 5000, 10000, 20000, 50000, 100000) if p <= events]
    return sorted(set(points + [events]))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.longlived",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="5,50", help="agent counts, e.g. 5,50")
    parser.add_argument("--events", default="100000",
                        help="events at the last point, one for all or one per agent count "
                             "(e.g. 100000,5000)")
    parser.add_argument("--points", default="",
                        help="the points (events so far), e.g. 1000,10000 (default: 1000, "
                             "2000, 5000, ... up to --events)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.agents.split(",")]
    totals = [int(n) for n in args.events.split(",")]
    totals = totals * len(counts) if len(totals) == 1 else totals
    points = {n: _points(args.points, total) for n, total in zip(counts, totals)}
    document = run(counts, points, lambda line: print(line, file=sys.stderr, flush=True))
    command = (f"python -m eval.longlived --agents {args.agents} --events {args.events}"
               + (f" --points {args.points}" if args.points else ""))
    picture = "longlived.png" if plot(document, _png(args.out)) else None
    write_results(args.out, "longlived", document, render(document, command, picture))
    print(render(document, command, picture))
    return 0


def _png(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "longlived.png"


if __name__ == "__main__":
    sys.exit(main())
