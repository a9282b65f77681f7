"""Memory and attach time per event of a memory with many agents (issue 26, item 8: "at 50
agents memory grows ~236 KB per event and attach takes 10 s at 10k events").

    python -m eval.agents [--agents 50] [--events 2000] [--out eval/results]

On a fresh embedded FalkorDB: a memory with AGENTS agents, everyone in one room, then
EVENTS mixed events (eval/workload.py) applied in writes of 20; after the first half and
after all: the server's used memory over what it used once the agents were declared, per
event, and the time
`Session.attach` takes (best of three), supervisor and as one agent, per event. The
slope between the two points says what one more event costs; a ratio of the two attach
times near 2 says attaching is linear in events. Writes agents.json and agents.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from eval.results_files import DEFAULT_OUT, write_results
from eval.workload import agent_names, mixed_events, setup_statements
from tomc.api import Session
from tomc.runtime.connection import Database, connect

NAME = "agents_bench"
BATCH = 20
KB = 1024


def _used(db: Database) -> int:
    return int(db.redis.info("memory")["used_memory"])


def _attach_s(db: Database, as_agent: Optional[str] = None, runs: int = 3) -> float:
    """The fastest of `runs` attaches (the session closed after each)."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        Session.attach(NAME, db=db, as_agent=as_agent, create=False).close()
        best = min(best, time.perf_counter() - started)
    return best


def measure(agents: int, events: int) -> dict:
    names = agent_names(agents)
    texts = list(mixed_events(names, events, seed=31))
    points = []
    with tempfile.TemporaryDirectory(prefix="tomc-agents-") as folder, \
            connect(None, Path(folder) / "data") as db:
        with Session.attach(NAME, db=db) as session:
            for statement in setup_statements(names):
                session.apply(statement)
            empty = _used(db)  # the server with the memory's agents, rooms and graphs
            for half in (texts[:events // 2], texts[events // 2:]):
                for start in range(0, len(half), BATCH):
                    session.apply("\n".join(half[start:start + BATCH]))
                done = session.step - 1  # the setup's one event
                points.append({"events": done, "used_bytes": _used(db) - empty,
                               "attach_s": _attach_s(db),
                               "attach_agent_s": _attach_s(db, names[0])})
    first, last = points
    span = last["events"] - first["events"]
    return {"agents": agents, "events": last["events"], "points": points,
            "used_bytes_per_event": last["used_bytes"] / last["events"],
            "used_bytes_per_more_event": (last["used_bytes"] - first["used_bytes"]) / span,
            "attach_ms_per_event": 1000 * last["attach_s"] / last["events"],
            "attach_ms_per_more_event": 1000 * (last["attach_s"] - first["attach_s"]) / span,
            "attach_agent_ms_per_event": 1000 * last["attach_agent_s"] / last["events"],
            "attach_last_over_first": last["attach_s"] / first["attach_s"],
            "machine": {"python": platform.python_version(), "system": platform.system()}}


def render(found: dict) -> str:
    rows = [("used memory per event (all / the second half)",
             f"{found['used_bytes_per_event'] / KB:.1f} KB / "
             f"{found['used_bytes_per_more_event'] / KB:.1f} KB"),
            ("attach per event (all / the second half)",
             f"{found['attach_ms_per_event']:.2f} ms / "
             f"{found['attach_ms_per_more_event']:.2f} ms"),
            ("attach as one agent per event", f"{found['attach_agent_ms_per_event']:.2f} ms"),
            ("attach at all events over attach at half", f"{found['attach_last_over_first']:.2f}")]
    lines = [f"# A memory of {found['agents']} agents: memory and attach time per event",
             "", f"`python -m eval.agents --agents {found['agents']} --events "
                 f"{found['events']}` (eval/agents.py), embedded FalkorDB.", "",
             "| figure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    lines += ["", "| events | used memory | attach | attach as one agent |", "|---|---|---|---|"]
    lines += [f"| {p['events']} | {p['used_bytes'] / KB / KB:.1f} MB | {p['attach_s']:.2f} s | "
              f"{p['attach_agent_s']:.2f} s |" for p in found["points"]]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.agents", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    found = measure(args.agents, args.events)
    write_results(args.out, "agents", found, render(found))
    sys.stdout.write(render(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
