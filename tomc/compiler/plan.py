"""The compiled plan: an ordered list of parameterised Cypher statements per scenario.

A statement runs on the world graph, or on the mind graph of every agent in `minds`
(names of bindings, e.g. ["witnesses"], or ["speaker"]). A world statement may `bind` its
result columns (witnesses, listeners, believers, facts) for the statements after it in
the same event, and so may a read of one mind graph (a handoff's facts, read from the
sender's mind); those values reach Cypher as parameters, never as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional


@dataclass(frozen=True)
class Statement:
    """One parameterised Cypher statement.

    `template` names the template file it was rendered from; `origin` is the .tom line
    (and its text) it implements; `params` holds every user value; `bound` lists the
    parameters filled at run time from an earlier statement's `binds`.
    """

    graph: Literal["world", "mind"]
    cypher: str
    params: dict[str, Any]
    template: str
    origin: tuple[int, str]
    minds: tuple[str, ...] = ()
    binds: bool = False
    bound: tuple[str, ...] = ()


@dataclass
class EventPlan:
    """The statements of one event, run in order; bindings live for one event."""

    step: int
    line: int
    text: str
    statements: list[Statement] = field(default_factory=list)


@dataclass(frozen=True)
class GraphNames:
    """Where a scenario's graphs are: the world graph and each agent's mind graph, by name.

    A run writes under staged names (`staged`), a simulation under forks (tomc/runtime/
    forks.py); the statements are the same, only the names differ.
    """

    world: str
    minds: dict[str, str]

    @property
    def agents(self) -> list[str]:
        """The agents, in declaration order."""
        return list(self.minds)

    def mind(self, agent: str) -> str:
        """The name of `agent`'s mind graph."""
        return self.minds[agent]

    def staged(self, suffix: str) -> "GraphNames":
        """Every name with `suffix` appended."""
        return GraphNames(self.world + suffix, {a: n + suffix for a, n in self.minds.items()})


@dataclass
class Plan:
    """Everything `tomc run` executes for one scenario, and what `tomc compile` prints."""

    scenario: str
    setup: list[Statement]
    events: list[EventPlan]
    world_graph: str
    mind_graph_prefix: str
    agents: list[str]

    def mind_graph(self, agent: str) -> str:
        """The name of `agent`'s mind graph."""
        return self.mind_graph_prefix + graph_key(agent)

    def graphs(self) -> GraphNames:
        """The scenario's graph names."""
        return GraphNames(self.world_graph, {a: self.mind_graph(a) for a in self.agents})

    def all_statements(self) -> list[Statement]:
        """Setup, then every event's statements, in execution order."""
        return [*self.setup, *(s for e in self.events for s in e.statements)]


def graph_key(name: str) -> str:
    """A scenario or agent name as it appears inside a graph name: `%`, `:` and `~` (and
    control characters) become `%XX`, so that `:` only separates the parts of a graph name
    and `~` only starts a staging suffix: no two scenarios' graphs can share a name."""
    return "".join(f"%{ord(c):02X}" if c in "%:~" or ord(c) < 32 else c for c in name)


def graph_names(scenario: str, prefix: str = "tom") -> tuple[str, str]:
    """(world graph, mind graph prefix): `tom:<scenario>:world`, `tom:<scenario>:mind:`,
    with the scenario name passed through `graph_key`."""
    key = graph_key(scenario)
    return f"{prefix}:{key}:world", f"{prefix}:{key}:mind:"


def describe_minds(minds: tuple[str, ...]) -> Optional[str]:
    """Human text for a statement's target graphs, e.g. 'the mind graph of each of:
    witnesses'; `agent` (setup) is the agent named in the statement's parameters."""
    if not minds:
        return None
    if minds == ("agent",):
        return "the mind graph of $agent"
    return "the mind graph of each of: " + " + ".join(minds)
