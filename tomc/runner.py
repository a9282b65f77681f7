"""Running checked scenarios on an engine and collecting their answers.

Two engines compute the same meaning: `falkordb` (the product: compiled Cypher on
FalkorDB) and `reference` (the pure-Python interpreter, for debugging and comparison), both
behind the engine protocol of tomc/engine/base.py. Belief queries and analyses read the
history as of their step once the run is over; `plan_announcements` simulates from the
state itself, so it is answered during the run, at its step (a checkpoint).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Union

import redis

from tomc.analysis import answer as analyses
from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.view import BeliefView
from tomc.answers import Answer
from tomc.dsl.program import AnalysisQuery, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine.base import EngineName
from tomc.engine import factory as engines
from tomc.memory.environment import Environment
from tomc.readiness import ReadyAnswer
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.executor import RunStats

AnyAnswer = Union[Answer, AnalysisAnswer, ReadyAnswer]


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
        """The belief view (tomc/analysis/view.py) of the run as of `step` (0..events).
        A run whose graphs were dropped (`keep=False`) has none: ValueError."""
        if self.view_at is None:
            raise ValueError(f"scenario {self.scenario.name}: its graphs were dropped after "
                             "the answers (run it with keep=True to read its views)")
        return self.view_at(step)

    @property
    def failed(self) -> list[AnyAnswer]:
        """The expectations that do not hold."""
        return [a for a in self.answers if a.passed is False]


def run_scenario(scenario: ScenarioModel, engine: EngineName = "falkordb",
                 db: Optional[Database] = None, keep: bool = True) -> ScenarioRun:
    """Execute one scenario and answer its queries.

    On `falkordb`, `db` is required; the scenario's graphs are replaced, and with
    `keep=False` dropped once the answers are read (the run then has no views): a folder of
    any size runs in bounded server memory. Raises DatabaseUnavailable if the database goes
    away.
    """
    answers = _Answers(scenario)
    checkpoints = {q.step for q in scenario.queries if _needs_state(q)}
    if db is None and engines.stored(engine):
        raise ValueError(f"the {engine} engine needs a database")
    held = Environment(db).engine(engine, scenario, checkpoints, lambda step, live: (
        answers.at_step(step, lambda: live.view(step))))
    if keep or not engines.stored(engine):  # nothing stored: nothing to drop
        answers.after(held.view, held.answer_all, held.ready)
        return ScenarioRun(scenario, answers.in_order(), held.stats, view_at=held.view)
    try:
        answers.after(held.view, held.answer_all, held.ready)
    finally:  # a failed answer leaves nothing behind either
        held.drop()
    return ScenarioRun(scenario, answers.in_order(), held.stats)


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
                with _origin(query):
                    self.found[i] = self._analysis(view, query)

    def after(self, view_at: Callable[[int], BeliefView],
              beliefs: Callable[[list[QueryModel]], list[Answer]],
              ready: Callable[[ReadyQuery], ReadyAnswer]) -> None:
        """Answer the other queries from the history, once the run is over: the belief
        questions together (one round trip on FalkorDB), then readiness and the
        analyses."""
        views: dict[int, BeliefView] = {}

        def view_of(step: int) -> BeliefView:
            if step not in views:
                views[step] = view_at(step)
            return views[step]

        asked = [i for i, q in enumerate(self.queries)
                 if i not in self.found and isinstance(q, QueryModel)]
        if asked:
            with _origin(self.queries[asked[0]]):
                self.found.update(zip(asked, beliefs([self.queries[i] for i in asked])))
        for i, query in enumerate(self.queries):
            if i in self.found:
                continue
            with _origin(query):
                if isinstance(query, ReadyQuery):
                    self.found[i] = ready(query)
                else:
                    self.found[i] = self._analysis(lambda: view_of(query.step), query)

    def in_order(self) -> list[AnyAnswer]:
        """Every answer, in the order of the scenario's queries."""
        return [self.found[i] for i in range(len(self.queries))]

    def _analysis(self, view: Callable[[], BeliefView], query: AnalysisQuery) -> AnalysisAnswer:
        same = analyses.same_analysis(query)
        found = analyses.answer(view(), query, self.results.get(same))
        self.results[same] = found.result
        return found


@contextmanager
def _origin(query) -> Iterator[None]:
    """Database failures while answering `query` carry its .tom line and text (what the CLI
    shows), as failures of a compiled statement carry their statement's."""
    try:
        yield
    except DatabaseUnavailable as err:
        if err.origin:
            raise
        raise DatabaseUnavailable(str(err), (query.line, query.text)) from err
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"FalkorDB failed: {str(err).splitlines()[0]}",
                                  (query.line, query.text)) from err


def _needs_state(query) -> bool:
    """Whether a query must be answered at its step during the run (it simulates from the
    state then) rather than read from the history afterwards."""
    return isinstance(query, AnalysisQuery) and query.analysis == "plan_announcements"
