"""The engine protocol: what every engine does with one scenario.

The checker (tomc/dsl/checker.py) decides what is valid; an engine keeps a scenario model
of its own (`scenario`), is told each change the checker took, makes it happen and answers
questions:

- `declare(agents, rooms, text)`: agents and rooms the scenario gains;
- `apply(events)`: events the scenario gains, in step order;
- `answer(query)`: an `expect` / `ask` about a belief, as of its step (`answer_all`: many
  at once; `answer_if_current`: the same, or None when other writers have committed since);
- `ready(query)`: an `ask` / `expect ready`, as of its step (`ready_if_current`: the same,
  or None when other writers have committed since);
- `view(step)`: the belief view the analyses read (tomc/analysis/view.py);
- `simulate(events)`: a view of the state after `events`, on a copy that is dropped after;
- `close()`: release what the engine holds (the graphs stay stored).

An engine whose storage other writers share (FalkorDB) counts committed changes in
`revision`, refuses to write over a newer state (`Behind`), and
catches up with `changes_since`, `follow` and `reload` (tomc/engine/live.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Literal, Optional, Protocol, Sequence

from tomc.analysis.view import BeliefView
from tomc.answers import Answer
from tomc.dsl.program import AnyEvent, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine.journal import Journal
from tomc.readiness import ReadyAnswer

EngineName = Literal["falkordb", "reference"]


class Behind(Exception):
    """Another writer committed to the scenario since this engine's state: nothing was
    written. `revision` is the scenario's revision now."""

    def __init__(self, revision: int):
        super().__init__(f"the scenario is at revision {revision}")
        self.revision = revision


class Engine(Protocol):
    """One scenario's beliefs, kept by some engine."""

    scenario: ScenarioModel
    revision: int
    journal: Journal  # what its commits keep beside it (tomc/engine/journal.py)

    @property
    def step(self) -> int:
        """The last step applied."""

    def changes_since(self, revision: int) -> tuple[int, list[tuple[int, str]]]:
        """(the revision reached, the statements other writers committed after `revision`,
        each as (revision, .tom text))."""

    def follow(self, agents: list[str], rooms: list[str], events: Sequence[AnyEvent]) -> None:
        """Take in agents, rooms and events another writer committed (already in the
        graphs): the scenario gains them, nothing is written."""

    def take_turn(self) -> None:
        """After losing several races (`Behind`), go before the other writers on the next
        commit (tomc/runtime/transactions.py)."""

    def end_turn(self) -> None:
        """Give back a turn taken but not used by a commit."""

    def reload(self, revision: int) -> None:
        """Take the state after catching up to `revision` from the storage (derived
        state)."""

    def declare(self, agents: list[str], rooms: list[str], text: str,
                extra: Sequence[tuple] = ()) -> None:
        """Make room for agents and rooms the scenario gains (`text`: the declaration as
        written, kept for replay; `extra`: commands of a shared store committed with it,
        e.g. its idempotency record)."""

    def apply(self, events: Sequence[AnyEvent], extra: Sequence[tuple] = ()) -> None:
        """Make `events` happen (the next ones of the scenario, in step order; `extra` as
        for `declare`, with the last event)."""

    def answer(self, query: QueryModel) -> Answer:
        """The answer to an expect or ask about a belief, as of its step."""

    def answer_all(self, queries: Sequence[QueryModel]) -> list[Answer]:
        """`answer` of each query (on FalkorDB, the reads in one round trip)."""

    def answer_if_current(self, query: QueryModel) -> Optional[Answer]:
        """`answer(query)`, or None when another writer has committed since `revision`
        (catch up, then ask again): on FalkorDB the check and the read are one round
        trip."""

    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        """Whether a procedure can run from the query's perspective, as of its step."""

    def ready_if_current(self, query: ReadyQuery) -> Optional[ReadyAnswer]:
        """`ready(query)`, or None when another writer has committed since `revision`."""

    def view(self, step: int) -> BeliefView:
        """The beliefs as of `step`, for the analyses."""

    def simulate(self, events: Sequence[AnyEvent]) -> AbstractContextManager[BeliefView]:
        """A view after `events` (numbered from the current step + 1) happen on a copy of
        the current state; the copy is dropped when the block ends."""

    def close(self) -> None:
        """Release connections; nothing stored is lost."""
