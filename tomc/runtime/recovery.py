"""Undoing an event that did not apply whole, and finding one when a memory is attached.

MULTI/EXEC runs every statement of an event, but a statement that fails at run time (a
FalkorDB limit, a bug) does not stop the others: FalkorDB rolls that one statement back and
the rest apply. The writer then undoes the event on every graph it could have touched
(undo.cypher: every write is stamped with its step, so undoing is exact), in a transaction
of its own. If the writer dies before it can, the next writer that attaches finds the event
half-applied (`check`): the world graph's Event lists the mind graphs it writes, and each of
those has its own Event node only if its statement applied. It undoes it then.
"""

from __future__ import annotations

from typing import Optional

import redis

from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable


def undo_event(db: Database, graphs: GraphNames, step: int, revision: Optional[int]) -> None:
    """Undo event `step` on the world graph and every mind graph, in one transaction that
    also moves the revision on (other writers see that something changed)."""
    pipe = db.redis.pipeline(transaction=True)
    pipe.execute_command(*query_command(graphs.world, render("undo.cypher", world=True),
                                        {"step": step}))
    for agent in graphs.agents:
        pipe.execute_command(*query_command(graphs.mind(agent),
                                            render("undo.cypher", world=False),
                                            {"step": step}))
    pipe.incr(graphs.revision_key)
    try:
        replies = pipe.execute(raise_on_error=False)
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not undo step {step}: {err}") from None
    failed = [r for r in replies if isinstance(r, Exception)]
    if failed:
        raise DatabaseUnavailable(f"could not undo step {step}: {failed[0]}")


def half_applied(db: Database, graphs: GraphNames) -> Optional[int]:
    """The step of an event that applied to some of its graphs but not all, or None.

    Only the latest event can be: writers commit one event at a time, each after the last
    one is whole. It is half-applied when a mind graph the world's Event lists lacks it, or
    when a mind graph holds the step after the world's (the world statement failed)."""
    rows = db.read(graphs.world, "MATCH (m:Memory) OPTIONAL MATCH (e:Event {step: m.step}) "
                   "RETURN m.step AS step, e.minds AS minds", {})
    if not rows:
        return None
    step, minds = rows[0]["step"], rows[0]["minds"] or []
    for agent in graphs.agents:
        found = db.read(graphs.mind(agent), "MATCH (e:Event) WHERE e.step >= $step "
                        "RETURN collect(e.step) AS steps", {"step": step})
        steps = set(found[0]["steps"]) if found else set()
        if step + 1 in steps:
            return step + 1
        if agent in minds and step not in steps:
            return step
    return None
