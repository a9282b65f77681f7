"""What a store keeps beside the graphs with each committed change, as the engine sees it:
nothing for a scenario file's graphs; for a named memory, the agents' views, the event hash
and the checkpoint (tomc/memory/journal.py). The engine calls it at each commit, undo and
failure, so the layers stay in order: the engine never imports the memory that uses it.
"""

from __future__ import annotations

from typing import Optional, Sequence

from tomc.compiler.plan import GraphNames
from tomc.dsl.checker import CheckState
from tomc.runtime.connection import Database


class Journal:
    """The journal of a scenario file's graphs: it keeps nothing."""

    #: Whether the graphs are a named memory's (which gets world indexes: FalkorEngine).
    memory = False

    def recorded(self, graphs: GraphNames, changes: Sequence, revision: int) -> list[tuple]:
        """The commands that keep `changes` (events, or declarations as .tom text), committed
        as `revision` + 1, + 2, ..., in the transaction that commits them."""
        return []

    def forgotten(self, pipe, graphs: GraphNames, steps: Sequence[int]) -> list[tuple]:
        """The commands that take events `steps` back out, in the transaction undoing them;
        `pipe` is that transaction's pipeline, before MULTI (reads run under its WATCH)."""
        return []

    def failed(self, db: Database, graphs: GraphNames) -> None:
        """A commit failed at run time: drop whatever it may have written that is kept
        whole (a checkpoint)."""

    def checkpoint(self, before: int, after: int, state: CheckState) -> Optional[tuple]:
        """The command keeping the checker's `state` with the commit that moves the revision
        from `before` to `after`, when that commit should keep one."""
        return None
