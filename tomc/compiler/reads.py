"""What an event must read from the graphs before it can be compiled, and what was read.

Three things are not known from the checked program alone (tomc/compiler/lower.py):

- `revealed`: under `reveal contents`, entering shows the values located in the room: the
  truth's current values there (read_revealed.cypher, on the world graph);
- `believers`: under `trust exit_order`, who trusts the speaker depends on where the key's
  object is and on exits (read_believers.cypher, on the world graph);
- `handed`: `handoff S -> R write` sends what `ask handoff S -> R` includes, computed from
  S's mind (tomc/analysis/handoff.py `facts_to_send`, over the graph's belief view).

The engine reads them just before the event (in the same optimistic transaction, so a
concurrent writer cannot slip in between: tomc/runtime/transactions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from tomc.compiler.plan import WORLD, Statement
from tomc.compiler.templates import render
from tomc.dsl.program import AnyEvent, Communication, Handoff, PolicyModel, Presence


@dataclass
class Bindings:
    """What was read for one event: `believers` (agent names), `revealed` (rows {key, value,
    many, room}), `handed` (rows of tomc/analysis/handoff.py `Sent.to_row`: {key, value, many,
    support, authority, published, valid_from, ended, valid_to, rivals})."""

    believers: list[str] = field(default_factory=list)
    revealed: list[dict[str, Any]] = field(default_factory=list)
    handed: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Read:
    """One binding to read before an event: `name` (a field of Bindings) and the world-graph
    statement that reads it, or None for `handed` (read through the sender's belief view)."""

    name: str
    statement: Optional[Statement]


def reads_for(event: AnyEvent, policy: PolicyModel) -> list[Read]:
    """The reads `event` needs before it is compiled (often none)."""
    origin = (event.line, event.text)
    if isinstance(event, Presence) and event.kind == "enter" and policy.reveal == "contents":
        return [Read("revealed", Statement(WORLD, "read_revealed.cypher",
                                           render("read_revealed.cypher"),
                                           {"room": event.room}, origin))]
    if isinstance(event, Communication) and policy.trust == "exit_order":
        return [Read("believers", Statement(
            WORLD, "read_believers.cypher", render("read_believers.cypher"),
            {"key": event.fact.key, "speaker": event.speaker,
             "listeners": [*event.listeners, *event.peekers]}, origin))]
    if isinstance(event, Handoff):
        return [Read("handed", None)]
    return []
