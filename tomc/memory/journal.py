"""A named memory's journal (tomc/engine/journal.py): with every commit, the agents' views of
the world (tomc/memory/agent_view.py) and the event hash (tomc/memory/checkpoint.py); every
checkpoint.EVERY revisions, the checkpoint; each taken back with an undone event."""

from __future__ import annotations

from typing import Optional, Sequence

from tomc.compiler.plan import GraphNames
from tomc.dsl.checker import CheckState
from tomc.engine.journal import Journal
from tomc.memory import agent_view, checkpoint
from tomc.runtime.connection import Database


class MemoryJournal(Journal):
    """The journal of memory graphs. `keep`: the memory's key base, whose checkpoint the
    commits write; None once attach found the event hash not whole (no checkpoint then)."""

    memory = True

    def __init__(self, keep: Optional[str]):
        self.keep = keep

    def recorded(self, graphs: GraphNames, changes: Sequence, revision: int) -> list[tuple]:
        return [*agent_view.record(graphs, changes, revision),
                *checkpoint.record(agent_view.base(graphs),
                                   [c for c in changes if not isinstance(c, str)])]

    def forgotten(self, pipe, graphs: GraphNames, steps: Sequence[int]) -> list[tuple]:
        base = agent_view.base(graphs)
        kept = checkpoint.kept_step(pipe, base)
        return [*agent_view.forget(graphs, steps), *checkpoint.forget(base, steps, kept)]

    def failed(self, db: Database, graphs: GraphNames) -> None:
        checkpoint.drop(db, agent_view.base(graphs))

    def checkpoint(self, before: int, after: int, state: CheckState) -> Optional[tuple]:
        if self.keep is None or not checkpoint.crossing(before, after):
            return None
        return checkpoint.write(self.keep, after, state)
