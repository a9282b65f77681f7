"""Running checked scenarios on an engine and collecting their answers.

Two engines compute the same meaning: `falkordb` (the product: compiled Cypher on
FalkorDB) and `reference` (the pure-Python interpreter, for debugging and comparison).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from tomc.answers import Answer
from tomc.compiler.lower import lower
from tomc.program import ScenarioModel
from tomc.reference.interpreter import run_reference
from tomc.runtime.connection import Database
from tomc.runtime.executor import Executor, RunStats
from tomc.runtime.queries import answer

Engine = Literal["falkordb", "reference"]


@dataclass
class ScenarioRun:
    """One scenario's answers, in file order, and (on FalkorDB) the run's timing."""

    scenario: ScenarioModel
    answers: list[Answer]
    stats: Optional[RunStats] = None

    @property
    def failed(self) -> list[Answer]:
        """The expectations that do not hold."""
        return [a for a in self.answers if a.passed is False]


def run_scenario(scenario: ScenarioModel, engine: Engine = "falkordb",
                 db: Optional[Database] = None) -> ScenarioRun:
    """Execute one scenario and answer its queries.

    On `falkordb`, `db` is required; the scenario's graphs are replaced. Raises
    DatabaseUnavailable if the database goes away.
    """
    if engine == "reference":
        interpreter = run_reference(scenario)
        return ScenarioRun(scenario, [interpreter.answer(q) for q in scenario.queries])
    plan = lower(scenario)
    stats = Executor(db).run(plan)
    return ScenarioRun(scenario, [answer(db, plan, q) for q in scenario.queries], stats)
