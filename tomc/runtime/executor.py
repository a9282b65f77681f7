"""Executing a Plan on FalkorDB: the world graph and one mind graph per agent.

A run builds its graphs under staging names (`<name>~building`) and only at the end swaps
them in for the scenario's previous graphs, in one MULTI/EXEC: a failed run leaves what
was stored before untouched, and re-running a scenario replaces its graphs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import redis

from tomc.compiler.plan import Plan, Statement
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable

STAGING_SUFFIX = "~building"


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

    def run(self, plan: Plan) -> RunStats:
        """Build the scenario's graphs from scratch, then swap them in for the old ones."""
        stats = RunStats()
        started = time.perf_counter()
        try:
            self._drop([n + STAGING_SUFFIX for n in self._existing(plan)])
            for statement in plan.setup:
                self._execute(plan, statement, {}, stats, staging=True)
            for event in plan.events:
                t0 = time.perf_counter()
                bindings: dict[str, Any] = {}
                for statement in event.statements:
                    self._execute(plan, statement, bindings, stats, staging=True)
                stats.event_seconds.append(time.perf_counter() - t0)
            self._swap(plan)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None
        stats.total_seconds = time.perf_counter() - started
        return stats

    def _execute(self, plan: Plan, statement: Statement, bindings: dict, stats: RunStats,
                 staging: bool) -> None:
        params = {**statement.params, **bindings}
        suffix = STAGING_SUFFIX if staging else ""
        if statement.graph == "world":
            result = self.db.graph(plan.world_graph + suffix).query(statement.cypher, params)
            stats.statements += 1
            if statement.binds and result.result_set:
                columns = [c[1] if isinstance(c, (list, tuple)) else c for c in result.header]
                bindings.update(zip(columns, result.result_set[0]))
            return
        for agent in self._minds(statement, params, plan.agents):
            self.db.graph(plan.mind_graph(agent) + suffix).query(statement.cypher, params)
            stats.statements += 1

    @staticmethod
    def _minds(statement: Statement, params: dict, agents: list[str]) -> list[str]:
        """The agents whose mind graphs a statement runs on, from its binding names."""
        chosen: list[str] = []
        for name in statement.minds:
            value = params.get(name)
            members = value if isinstance(value, list) else [value]
            chosen.extend(m for m in members if m is not None and m not in chosen)
        return [a for a in agents if a in chosen]

    def _existing(self, plan: Plan) -> list[str]:
        """Graph names (final, without suffix) this scenario owns: its world and minds."""
        wanted = {plan.world_graph, *(plan.mind_graph(a) for a in plan.agents)}
        prefix = plan.mind_graph_prefix
        for name in self.db.graph_names():
            base = name.removesuffix(STAGING_SUFFIX)
            if base == plan.world_graph or base.startswith(prefix):
                wanted.add(base)
        return sorted(wanted)

    def _drop(self, names: list[str]) -> None:
        if names:
            self.db.redis.delete(*names)

    def _swap(self, plan: Plan) -> None:
        names = self._existing(plan)
        built = set(self.db.graph_names())
        pipe = self.db.redis.pipeline(transaction=True)
        for name in names:
            pipe.delete(name)
        for name in names:
            if name + STAGING_SUFFIX in built:
                pipe.rename(name + STAGING_SUFFIX, name)
        pipe.execute()
