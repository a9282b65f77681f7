"""Executing a Plan on FalkorDB: the world graph and one mind graph per agent.

A run builds its graphs under staging names (`<name>~building`) and only at the end swaps
them in for the scenario's previous graphs, in one MULTI/EXEC: a failed run leaves what
was stored before untouched, and re-running a scenario replaces its graphs. `apply` runs
further events on graphs as they are: a live session's, or a simulation's forks.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import redis

from tomc.compiler.plan import EventPlan, GraphNames, Plan, Statement
from tomc.runtime.connection import Database, records
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import process_alive

# A run builds under `<name>~building~<pid>-<random>`: names never hold `~` (graph_key),
# and concurrent runs of one scenario on a shared server each build their own graphs.
STAGING_MARK = "~building~"

# Called after the setup (step 0) and after each event of a run, with the step and the
# (staged) graphs as they are then: answers that need the state at a step, not a read of
# the history, are taken here (plan_announcements forks the graphs at its step).
Checkpoint = Callable[[int, GraphNames], None]


@dataclass
class RunStats:
    """Timing of one run: seconds per event (world write, truth and routing statements)."""

    event_seconds: list[float] = field(default_factory=list)
    statements: int = 0
    total_seconds: float = 0.0


class Executor:
    """Runs plans on one Database. Raises DatabaseUnavailable when the server goes away."""

    def __init__(self, db: Database):
        self.db = db

    def run(self, plan: Plan, checkpoint: Optional[Checkpoint] = None) -> RunStats:
        """Build the scenario's graphs from scratch, then swap them in for the old ones."""
        stats = RunStats()
        started = time.perf_counter()
        suffix = f"{STAGING_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staged = plan.graphs().staged(suffix)
        try:
            self._drop(self._abandoned(plan))
            self.execute(staged, plan.setup, stats)
            if checkpoint:
                checkpoint(0, staged)
            for event in plan.events:
                self._event(staged, event, stats)
                if checkpoint:
                    checkpoint(event.step, staged)
            self._swap(plan, suffix)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        except redis.ResponseError:
            self._drop(self._staged(plan, suffix))
            raise
        stats.total_seconds = time.perf_counter() - started
        return stats

    def apply(self, graphs: GraphNames, events: list[EventPlan]) -> RunStats:
        """Run event plans on `graphs` as they are, no staging: the graphs must hold the
        events before them (a live session, a fork)."""
        stats = RunStats()
        started = time.perf_counter()
        try:
            for event in events:
                self._event(graphs, event, stats)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        stats.total_seconds = time.perf_counter() - started
        return stats

    def execute(self, graphs: GraphNames, statements: list[Statement],
                stats: Optional[RunStats] = None) -> None:
        """Run statements that bind nothing (setup, declarations) on `graphs`."""
        for statement in statements:
            self._execute(graphs, statement, {}, stats or RunStats())

    def _event(self, graphs: GraphNames, event: EventPlan, stats: RunStats) -> None:
        started = time.perf_counter()
        bindings: dict[str, Any] = {}  # live for one event only
        for statement in event.statements:
            self._execute(graphs, statement, bindings, stats)
        stats.event_seconds.append(time.perf_counter() - started)

    def _execute(self, graphs: GraphNames, statement: Statement, bindings: dict,
                 stats: RunStats) -> None:
        params = {**statement.params, **bindings}
        if statement.graph == "world":
            targets = [graphs.world]
        else:
            targets = [graphs.mind(a) for a in self._minds(statement, params, graphs.agents)]
        for name in targets:
            result = self.db.graph(name).query(statement.cypher, params)
            stats.statements += 1
            # A binding statement runs on one graph: the world, or the speaker's mind.
            if statement.binds and result.result_set:
                bindings.update(records(result)[0])

    @staticmethod
    def _minds(statement: Statement, params: dict, agents: list[str]) -> list[str]:
        """The agents whose mind graphs a statement runs on, from its binding names."""
        chosen: list[str] = []
        for name in statement.minds:
            value = params.get(name)
            members = value if isinstance(value, list) else [value]
            chosen.extend(m for m in members if m is not None and m not in chosen)
        return [a for a in agents if a in chosen]

    def _owned(self, plan: Plan) -> list[str]:
        """Every graph on the server that belongs to this scenario, staging ones included:
        its world graph and the mind graphs under its prefix (graph_key keeps `:` and `~`
        out of names, so no other scenario's graph matches)."""
        return [name for name in self.db.graph_names()
                if name.split("~", 1)[0] == plan.world_graph
                or name.split("~", 1)[0].startswith(plan.mind_graph_prefix)]

    def _staged(self, plan: Plan, suffix: str) -> list[str]:
        return [name for name in self._owned(plan) if name.endswith(suffix)]

    def _abandoned(self, plan: Plan) -> list[str]:
        """Staging graphs of this scenario left by a run whose process is gone (killed)."""
        out = []
        for name in self._owned(plan):
            if STAGING_MARK in name:
                owner = name.rsplit(STAGING_MARK, 1)[1].split("-", 1)[0]
                if not owner.isdigit() or not process_alive(int(owner)):
                    out.append(name)
        return out

    def _drop(self, names: list[str]) -> None:
        if names:
            self.db.redis.delete(*names)

    def _swap(self, plan: Plan, suffix: str) -> None:
        """In one MULTI/EXEC: delete the scenario's current graphs (including minds of agents
        it no longer has), rename this run's staging graphs to their final names."""
        owned = self._owned(plan)
        final = [name for name in owned if "~" not in name]
        staged = [name for name in owned if name.endswith(suffix)]
        pipe = self.db.redis.pipeline(transaction=True)
        for name in final:
            pipe.delete(name)
        for name in staged:
            pipe.rename(name, name.removesuffix(suffix))
        pipe.execute()

