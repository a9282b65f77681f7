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
from tomc.program import AnalysisQuery, QueryModel, ScenarioModel
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
    """One scenario's answers, in file order, and (on FalkorDB) the run's timing.

    `view(step)` gives the beliefs as of any step of the run (every chain, key and event),
    for reports that show more than the answers.
    """

    scenario: ScenarioModel
    answers: list[AnyAnswer]
    stats: Optional[RunStats] = None
    view_at: Optional[Callable[[int], BeliefView]] = None

    def view(self, step: int) -> BeliefView:
        """The belief view (tomc/analysis/view.py) of the run as of `step` (0..events)."""
        return self.view_at(step)

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
    answers = _Answers(scenario)
    if engine == "reference":
        interpreter = ReferenceInterpreter(scenario)
        answers.at_step(0, lambda: ReferenceView(interpreter, 0))
        for event in scenario.events:
            interpreter.apply(event)
            answers.at_step(event.step, lambda: ReferenceView(interpreter, event.step))
        answers.after(lambda step: ReferenceView(interpreter, step), interpreter.answer)
        return ScenarioRun(scenario, answers.in_order(),
                           view_at=lambda step: ReferenceView(interpreter, step))
    plan = lower(scenario)

    def checkpoint(step: int, graphs: GraphNames) -> None:
        answers.at_step(step, lambda: GraphView(db, graphs, scenario, step))

    stats = Executor(db).run(plan, checkpoint)
    answers.after(lambda step: GraphView(db, plan.graphs(), scenario, step),
                  lambda query: answer(db, plan.graphs(), query))
    return ScenarioRun(scenario, answers.in_order(), stats,
                       view_at=lambda step: GraphView(db, plan.graphs(), scenario, step))


class _Answers:
    """The answers of one run, collected at checkpoints and after it; each distinct analysis
    (`same_analysis`) is computed once, and the views of one step are shared."""

    def __init__(self, scenario: ScenarioModel):
        self.queries = scenario.queries
        self.found: dict[int, AnyAnswer] = {}
        self.results: dict[tuple, analyses.Result] = {}

    def at_step(self, step: int, view: Callable[[], BeliefView]) -> None:
        """Answer the queries that need the state at `step` (see `_needs_state`)."""
        for i, query in enumerate(self.queries):
            if query.step == step and _needs_state(query):
                self.found[i] = self._analysis(view, query)

    def after(self, view_at: Callable[[int], BeliefView],
              belief: Callable[[QueryModel], Answer]) -> None:
        """Answer the other queries from the history, once the run is over."""
        views: dict[int, BeliefView] = {}

        def view_of(step: int) -> BeliefView:
            if step not in views:
                views[step] = view_at(step)
            return views[step]

        for i, query in enumerate(self.queries):
            if i in self.found:
                continue
            if isinstance(query, AnalysisQuery):
                self.found[i] = self._analysis(lambda: view_of(query.step), query)
            else:
                self.found[i] = belief(query)

    def in_order(self) -> list[AnyAnswer]:
        """Every answer, in the order of the scenario's queries."""
        return [self.found[i] for i in range(len(self.queries))]

    def _analysis(self, view: Callable[[], BeliefView], query: AnalysisQuery) -> AnalysisAnswer:
        same = analyses.same_analysis(query)
        found = analyses.answer(view(), query, self.results.get(same))
        self.results[same] = found.result
        return found


def _needs_state(query) -> bool:
    """Whether a query must be answered at its step during the run (it simulates from the
    state then) rather than read from the history afterwards."""
    return isinstance(query, AnalysisQuery) and query.analysis == "plan_announcements"
