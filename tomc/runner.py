"""Running checked scenarios on an engine and collecting their answers.

Two engines compute the same meaning: `falkordb` (the product: compiled Cypher on
FalkorDB) and `reference` (the pure-Python interpreter, for debugging and comparison).
Belief queries and analyses read the history as of their step once the run is over;
`plan_announcements` simulates from the state itself, so it is answered during the run, at
its step (a checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Optional, Union

from tomc.analysis import answer as analyses
from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.view import BeliefView
from tomc.answers import Answer
from tomc.compiler.lower import lower
from tomc.compiler.plan import GraphNames
from tomc.program import AnalysisQuery, ScenarioModel
from tomc.reference.interpreter import ReferenceInterpreter
from tomc.reference.view import ReferenceView
from tomc.runtime.connection import Database
from tomc.runtime.executor import Executor, RunStats
from tomc.runtime.graph_view import GraphView
from tomc.runtime.queries import answer

Engine = Literal["falkordb", "reference"]
AnyAnswer = Union[Answer, AnalysisAnswer]


@dataclass
class ScenarioRun:
    """One scenario's answers, in file order, and (on FalkorDB) the run's timing."""

    scenario: ScenarioModel
    answers: list[AnyAnswer]
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
    answers: dict[int, AnyAnswer] = {}
    during = {i: q for i, q in enumerate(scenario.queries) if _needs_state(q)}

    def at_step(step: int, view: Callable[[], BeliefView]) -> None:
        for i, query in during.items():
            if query.step == step:
                answers[i] = analyses.answer(view(), query)

    stats = None
    if engine == "reference":
        interpreter = ReferenceInterpreter(scenario)
        at_step(0, lambda: ReferenceView(interpreter, 0))
        for event in scenario.events:
            interpreter.apply(event)
            at_step(event.step, lambda: ReferenceView(interpreter, event.step))

        def view_at(step: int) -> BeliefView:
            return ReferenceView(interpreter, step)

        belief = interpreter.answer
    else:
        plan = lower(scenario)

        def checkpoint(step: int, graphs: GraphNames) -> None:
            at_step(step, lambda: GraphView(db, graphs, scenario, step))

        stats = Executor(db).run(plan, checkpoint)

        def view_at(step: int) -> BeliefView:
            return GraphView(db, plan.graphs(), scenario, step)

        def belief(query) -> Answer:
            return answer(db, plan, query)

    for i, query in enumerate(scenario.queries):
        if i not in answers:
            answers[i] = (analyses.answer(view_at(query.step), query)
                          if isinstance(query, AnalysisQuery) else belief(query))
    return ScenarioRun(scenario, [answers[i] for i in range(len(scenario.queries))], stats)


def _needs_state(query) -> bool:
    """Whether a query must be answered at its step during the run (it simulates from the
    state then) rather than read from the history afterwards."""
    return isinstance(query, AnalysisQuery) and query.analysis == "plan_announcements"
