"""The baseline of `python -m eval.bench`: bare FalkorDB round trips, taken between the
measured operations so that every ratio compares timings of the same run and conditions.

A bare write is `GRAPH.QUERY` of `CREATE (:X)` on a scratch graph; a bare read is
`GRAPH.RO_QUERY` of `MATCH (x:Y) RETURN count(x)` on it (one node). The scratch graph is
deleted at the end, so it never counts in the memory figures.

`Samples` collects seconds and gives nearest-rank percentiles in milliseconds;
`RoundTrips` counts the round trips a block of code makes (each packed send on a redis
connection is one: a pipeline or a MULTI/EXEC batch sends once).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from redis.connection import AbstractConnection

from tomc.runtime.connection import Database

SCRATCH = "bench:scratch"


class Samples:
    """Durations in seconds; percentiles in milliseconds (nearest rank)."""

    def __init__(self):
        self.seconds: list[float] = []

    def add(self, seconds: float) -> None:
        self.seconds.append(seconds)

    def time(self, action: Callable[[], object]) -> object:
        """Run `action`, record how long it took, return its result."""
        started = time.perf_counter()
        result = action()
        self.add(time.perf_counter() - started)
        return result

    def p(self, percent: float) -> float:
        ordered = sorted(self.seconds)
        if not ordered:
            return 0.0
        return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)] * 1000

    def __len__(self) -> int:
        return len(self.seconds)


class Baseline:
    """Bare write and read round trips on a scratch graph, sampled on demand."""

    def __init__(self, db: Database):
        self.db = db
        self.writes = Samples()
        self.reads = Samples()
        self.db.redis.execute_command("GRAPH.QUERY", SCRATCH, "CREATE (:Y)", "--compact")

    def sample(self) -> None:
        """One bare write and one bare read, each timed."""
        command = self.db.redis.execute_command
        self.writes.time(lambda: command("GRAPH.QUERY", SCRATCH, "CREATE (:X)", "--compact"))
        self.reads.time(lambda: command("GRAPH.RO_QUERY", SCRATCH,
                                        "MATCH (x:Y) RETURN count(x)", "--compact"))

    def drop(self) -> None:
        self.db.redis.delete(SCRATCH)


class RoundTrips:
    """Counts packed sends on every redis connection while `counting()` is open."""

    def __init__(self):
        self.count = 0

    @contextmanager
    def counting(self) -> Iterator["RoundTrips"]:
        original = AbstractConnection.send_packed_command

        def counted(connection, command, check_health=True):
            self.count += 1
            return original(connection, command, check_health)

        AbstractConnection.send_packed_command = counted
        try:
            yield self
        finally:
            AbstractConnection.send_packed_command = original


def idle_baseline(db: Database, count: int = 50) -> Baseline:
    """`count` bare writes and reads taken now, before a section runs (the scratch graph
    dropped): what every ratio of the section divides by, so that no ratio divides by a
    round trip stretched by the section's own load (issue 27)."""
    baseline = Baseline(db)
    for _ in range(count):
        baseline.sample()
    baseline.drop()
    return baseline
