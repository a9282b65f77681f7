"""`python -m eval.search_bench [--keys N] [--out DIR]`: search latency at 10k keys, as
ratios to a bare FalkorDB read measured in the same run (issue 23).

A scenario of 3 agents in one room observes N keys (`kI.status = "state I ..."`, default
10,000), run once with `Session.open` on an embedded FalkorDB in a temporary folder; every
mind graph and the world graph then hold N versions. Each measured call follows one bare
write and one bare read (eval/roundtrips.py), so the ratios compare the same minutes of a
shared machine:

- **believes**: `session.believes("A", key)`, the exact-key read search is compared with;
- **search, one hit**: `session.search(word)` for a word only one key has (the first search
  made the indexes: not measured);
- **search, 1% of keys**: a word 1% of the keys share (N/100 keys; every matching version
  is read, then ranked: the cost grows with what matches, not with N);
- **search as an agent**: the one-hit search through the agent's read-only user.

Writes `search.json` and `search.md` into `--out` (default eval/results).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from eval.roundtrips import Baseline, Samples
from tomc.api import Session
from tomc.runtime.connection import Database, connect

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "eval" / "results"
AGENTS = ("A", "B", "C")


def scenario(keys: int) -> str:
    """A scenario in which three agents see `keys` keys set; key I's value names a word
    shared by 1% of the keys (`groupG`) and a word of its own (`uniqueI`)."""
    lines = ["scenario search_bench {", f"  agents {', '.join(AGENTS)}", "  rooms room",
             f"  {', '.join(AGENTS)} enter room"]
    lines += [f'  in room: k{i}.status = "state group{i % 100}z unique{i}z"' for i in range(keys)]
    return "\n".join(lines + ["}"]) + "\n"


def _timed(db: Database, count: int, action: Callable[[int], object]) -> tuple[Samples, Samples]:
    """`action(i)` for i < count, each after a bare write and read: (its times, reads)."""
    baseline, samples = Baseline(db), Samples()
    for i in range(count):
        baseline.sample()
        samples.time(lambda: action(i))
    baseline.drop()
    return samples, baseline.reads


def run(keys: int, count: int) -> dict:
    """Every figure, in milliseconds and ratios."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "search_bench.tom"
        path.write_text(scenario(keys), encoding="utf-8")
        with connect(None, Path(folder) / "data") as db:
            started = time.perf_counter()
            with Session.open(path, db=db) as session:
                built = time.perf_counter() - started
                started = time.perf_counter()
                first = session.search("unique1z")
                indexed = time.perf_counter() - started
                assert [h.key for h in first.hits][:1] == ["k1.status"], first.lines()
                rows = {}
                rows["believes"] = _timed(db, count, lambda i: session.believes(
                    "A", f"k{(i * 7919) % keys}.status"))
                rows["search_one"] = _timed(db, count, lambda i: session.search(
                    f"unique{(i * 7919) % keys}z"))
                rows["search_percent"] = _timed(db, max(5, count // 5), lambda i: session.search(
                    f"group{i % 100}z", limit=20))
                found = session.search("group7z", limit=1000)
            name = session.memory or "search_bench"
        # an agent's read-only user: a memory loaded from the same file
        with connect(None, Path(folder) / "data") as db:
            with Session.load("search_agent", path, db=db) as memory:
                memory.search("unique1z")  # makes the indexes (as a supervisor would)
            with Session.attach("search_agent", db=db, as_agent="A") as agent:
                rows["search_agent"] = _timed(db, count, lambda i: agent.search(
                    f"unique{(i * 7919) % keys}z"))
    figures = {"keys": keys, "agents": len(AGENTS), "samples": count,
               "build_seconds": round(built, 1), "first_search_seconds": round(indexed, 2),
               "percent_hits": found.total, "scenario": name}
    for row, (samples, reads) in rows.items():
        figures[f"{row}_p50_ms"] = round(samples.p(50), 2)
        figures[f"{row}_p99_ms"] = round(samples.p(99), 2)
        figures[f"{row}_over_read"] = round(samples.p(50) / max(reads.p(50), 1e-6), 1)
        figures[f"{row}_read_p50_ms"] = round(reads.p(50), 3)
    return figures


def render(figures: dict) -> str:
    """The table of search.md."""
    rows = [("believes (exact key)", "believes"), ("search, one hit", "search_one"),
            ("search, 1% of keys match", "search_percent"),
            ("search as an agent, one hit", "search_agent")]
    out = ["# Search latency", "",
           f"Generated by `python -m eval.search_bench`: {figures['keys']:,} keys seen by "
           f"{figures['agents']} agents (every mind graph and the world hold "
           f"{figures['keys']:,} versions), on the embedded FalkorDB; each call after one bare "
           "write and one bare read, p50 over the bare read's p50 of the same run. The 1% row "
           f"matches {figures['percent_hits']:,} versions (every chain's, ranked in Python; "
           "`limit` only cuts what is shown). Building the memory took "
           f"{figures['build_seconds']} s; the first search, which made the full-text "
           f"indexes, {figures['first_search_seconds']} s. {figures['samples']} samples a row "
           f"(a fifth for the 1% row). Python {platform.python_version()}.", "",
           "| call | p50 | p99 | over a bare read (p50) |", "|---|---|---|---|"]
    for label, row in rows:
        out.append(f"| {label} | {figures[row + '_p50_ms']:.2f} ms | "
                   f"{figures[row + '_p99_ms']:.2f} ms | {figures[row + '_over_read']}x |")
    return "\n".join(out) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.search_bench",
                                     description="Search latency at N keys, over a bare read.")
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    figures = run(args.keys, args.samples)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "search.json").write_text(json.dumps(figures, indent=2) + "\n",
                                          encoding="utf-8")
    (args.out / "search.md").write_text(render(figures), encoding="utf-8")
    print(render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
