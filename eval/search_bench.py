"""`python -m eval.search_bench [--keys N] [--out DIR]`: search latency at 10k keys, as
ratios to a bare FalkorDB read measured in the same run (issue 23).

Three agents' mind graphs and the world graph each hold N versions (`kI.status = "state
groupGz uniqueIz"`, default 10,000), written in bulk in the schema the templates write
(`P` per chain, `V` with its words on a `HOLDS` edge: resolve.cypher) on an embedded
FalkorDB in a temporary folder. Applying 10,000 events one by one costs minutes (each
resolution collects the chain's open versions), and search reads only that shape. Each
measured call follows one bare write and one bare read (eval/roundtrips.py), so the ratios
compare the same minutes of a shared machine:

- **search, one hit**: a word only one key has, over the three minds and the truth;
- **search, 1% of keys**: a word N/100 keys share (every matching version is read, then
  ranked: the cost grows with what matches, not with N);
- **search of one mind**: the one-hit search over one mind graph (what an agent searches);
- **index query alone**: the one-hit `read_search.cypher` on one mind graph.

The first search made the full-text indexes (not measured). Writes `search.json` and
`search.md` into `--out` (default eval/out; `--out eval/results` replaces the committed
results).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from eval.results_files import DEFAULT_OUT, write_results
from eval.roundtrips import Baseline, Samples
from tomc.analysis.search import search
from tomc.compiler.plan import graph_names
from tomc.compiler.templates import render as cypher
from tomc.dsl.checker import check_text
from tomc.runtime import search_index
from tomc.runtime.connection import Database, connect
from tomc.runtime.graph_view import GraphView
from tomc.search_text import index_query, terms, words

AGENTS = ("A", "B", "C")
BATCH = 1000
# The versions, as resolve.cypher writes them (support and authority lists included).
BULK = """UNWIND $rows AS r
MERGE (p:P {agents: $agents})
ON CREATE SET p.depth = size($agents), p.owns = [], p.owns_since = []
CREATE (p)-[:HOLDS]->(:V {key: r.key, value: r.value, many: false, since: r.step,
        kind: 'state', rule: 'witnesses', source: null, authority: 0, origin_authority: 0,
        published: null, valid_from: '', room: 'room', made: r.step, words: r.words,
        support: [], support_since: [], support_authority: []})"""


def fill(db: Database, graph: str, agents: list[str], keys: int) -> None:
    """`keys` versions of chain `agents` in `graph`."""
    rows = []
    for i in range(keys):
        key, value = f"k{i}.status", f"state group{i % 100}z unique{i}z"
        rows.append({"key": key, "value": value, "step": i + 1, "words": words(key, value)})
    for start in range(0, keys, BATCH):
        db.write(graph, BULK, {"rows": rows[start:start + BATCH], "agents": agents})


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
    scenario = check_text("scenario search_bench {\n  agents A, B, C\n}\n").scenarios[0]
    graphs = graph_names("search_bench", list(AGENTS))
    with tempfile.TemporaryDirectory() as folder, connect(None, Path(folder)) as db:
        started = time.perf_counter()
        fill(db, graphs.world, [], keys)
        for agent in AGENTS:
            fill(db, graphs.mind(agent), [agent], keys)
        built = time.perf_counter() - started
        view = GraphView(db, graphs, scenario, keys, indexes=True)
        started = time.perf_counter()
        first = search(view, "unique1z", AGENTS, True, False)
        indexed = time.perf_counter() - started
        assert {h.key for h in first.hits} == {"k1.status"}, first.lines()
        mind = GraphView(db, graphs, scenario, keys)
        rows = {
            "search_one": _timed(db, count, lambda i: search(
                view, f"unique{(i * 7919) % keys}z", AGENTS, True, False)),
            "search_percent": _timed(db, max(5, count // 5), lambda i: search(
                view, f"group{i % 100}z", AGENTS, True, False)),
            "search_mind": _timed(db, count, lambda i: search(
                mind, f"unique{(i * 7919) % keys}z", ["A"], False, False)),
            "index_query": _timed(db, count, lambda i: db.read(
                graphs.mind("A"), cypher("read_search.cypher"),
                {"query": index_query(terms(f"unique{(i * 7919) % keys}z")), "step": keys})),
        }
        found = search(view, "group7z", AGENTS, True, False, limit=1000)
        search_index.ensure(db, graphs, AGENTS, True)  # idempotent: nothing left to make
    figures = {"keys": keys, "agents": len(AGENTS), "samples": count,
               "build_seconds": round(built, 1), "first_search_seconds": round(indexed, 2),
               "percent_hits": found.total,
               "percent_versions": sum(len(h.chains) for h in found.hits)}
    for row, (samples, reads) in rows.items():
        figures[f"{row}_p50_ms"] = round(samples.p(50), 2)
        figures[f"{row}_p99_ms"] = round(samples.p(99), 2)
        figures[f"{row}_over_read"] = round(samples.p(50) / max(reads.p(50), 1e-6), 1)
        figures[f"{row}_read_p50_ms"] = round(reads.p(50), 3)
    return figures


def render(figures: dict) -> str:
    """The table of search.md."""
    rows = [("search, one hit (3 minds + truth)", "search_one"),
            ("search, 1% of keys match", "search_percent"),
            ("search of one mind, one hit", "search_mind"),
            ("index query alone (one mind)", "index_query")]
    out = ["# Search latency", "",
           f"Generated by `python -m eval.search_bench`: {figures['keys']:,} keys seen by "
           f"{figures['agents']} agents (every mind graph and the world hold "
           f"{figures['keys']:,} versions, written in bulk in the templates' schema), on the "
           "embedded FalkorDB; each call after one bare "
           "write and one bare read, p50 over the bare read's p50 of the same run. The 1% row "
           f"finds {figures['percent_hits']:,} facts, one hit each for "
           f"{figures.get('percent_versions', figures['percent_hits']):,} versions (every "
           "chain's, ranked in Python; `limit` only cuts what is shown). Writing the graphs took "
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
    write_results(args.out, "search", figures, render(figures))
    print(render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
