"""The reference engine: the pure-Python interpreter of docs/semantics.md (tomc/reference/),
behind the engine protocol, for debugging and comparison. Nothing is stored."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

from tomc.analysis.view import BeliefView
from tomc.answers import Answer
from tomc.dsl.program import AnyEvent, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine.journal import Journal
from tomc.readiness import ReadyAnswer
from tomc.reference.interpreter import ReferenceInterpreter
from tomc.reference.view import ReferenceView


class ReferenceEngine:
    """One scenario in the reference interpreter (an Engine: tomc/engine/base.py). It has
    one writer, so it is never behind: every change is one revision."""

    journal = Journal()  # a file's: it keeps nothing beside the engine

    def __init__(self, scenario: ScenarioModel):
        self.scenario = scenario
        self.interpreter = ReferenceInterpreter(scenario)
        self.revision = 0
        self._step = 0

    @property
    def step(self) -> int:
        return self._step

    @classmethod
    def build(cls, db, scenario: ScenarioModel, checkpoints: frozenset = frozenset(),
              checkpoint=None) -> "ReferenceEngine":
        """Every event of `scenario` applied (`db` unused: nothing is stored); calls
        `checkpoint(step, engine)` after the steps in `checkpoints` (0: before any)."""
        engine = cls(dataclasses.replace(scenario, agents=list(scenario.agents),
                                         rooms=list(scenario.rooms), events=[]))
        if 0 in checkpoints and checkpoint:
            checkpoint(0, engine)
        for event in scenario.events:
            engine.apply([event])
            if event.step in checkpoints and checkpoint:
                checkpoint(event.step, engine)
        return engine

    @property
    def stats(self) -> None:
        """No run statistics: nothing is sent anywhere."""
        return None

    def drop(self) -> None:
        """Nothing is stored: nothing to drop."""

    def declare(self, agents: list[str], rooms: list[str], text: str,
                extra: Sequence[tuple] = ()) -> None:
        # `extra`: a shared store's bookkeeping (idempotency records); nothing here keeps it.
        self.scenario.agents.extend(agents)
        self.scenario.rooms.extend(rooms)
        self.interpreter.declare()
        self.revision += 1

    def apply(self, events: Sequence[AnyEvent], extra: Sequence[tuple] = ()) -> None:
        for event in events:
            self.scenario.events.append(event)
            self.interpreter.apply(event)
            self._step = event.step
            self.revision += 1

    def take_turn(self) -> None:
        """Nothing to wait for: no other writer shares this engine's state."""

    def end_turn(self) -> None:
        """Nothing to give back."""

    def changes_since(self, revision: int) -> tuple[int, list[tuple[int, str]]]:
        return self.revision, []

    def follow(self, agents: list[str], rooms: list[str], events: Sequence[AnyEvent]) -> None:
        """Never called: no other writer commits to this engine's scenario."""

    def reload(self, revision: int) -> None:
        pass

    def answer(self, query: QueryModel) -> Answer:
        return self.interpreter.answer(query)

    def answer_all(self, queries: Sequence[QueryModel]) -> list[Answer]:
        return [self.answer(q) for q in queries]

    def answer_if_current(self, query: QueryModel) -> Optional[Answer]:
        return self.answer(query)  # no other writers

    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        return self.interpreter.ready(query)

    def ready_if_current(self, query: ReadyQuery) -> Optional[ReadyAnswer]:
        return self.ready(query)  # no other writers

    def view(self, step: int) -> BeliefView:
        return ReferenceView(self.interpreter, step)

    @contextmanager
    def simulate(self, events: Sequence[AnyEvent]) -> Iterator[BeliefView]:
        with ReferenceView(self.interpreter, self._step).simulate(events) as view:
            yield view

    def close(self) -> None:
        pass
