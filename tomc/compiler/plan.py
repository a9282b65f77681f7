"""The compiled plan: parameterised Cypher statements, each for one graph, in order.

A scenario has one world graph (agents, rooms, presence, events, who told whom, the truth)
and one mind graph per agent (the chains that start with that agent). Each event becomes at
most one statement per graph it changes (two for a mind that first copies inherited history:
tomc/compiler/perspectives.py); the runtime sends an event's statements together, in one
transaction. Every user name and value is a parameter. Perspectives are named in parameters
by their chain (a list of agents); the runtime links each to its node in the mind graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from tomc.names import graph_key  # noqa: F401  (re-exported: names of graphs)

# The target of a statement on the world graph. Not a string: any string can be an agent's
# name (an agent called `world` has a mind graph like any other).
WORLD = None


@dataclass(frozen=True)
class Statement:
    """One parameterised Cypher statement on one graph.

    `graph` is WORLD (None) or the agent whose mind graph it runs on; `template` names the template
    file it was rendered from; `origin` is the .tom line (and its text) it implements;
    `params` holds every user value; with `links`, the parameters `copies` and `writes` name
    perspectives by chain (`p`, `source`), which the runtime replaces by node ids.
    """

    graph: Optional[str]
    template: str
    cypher: str
    params: dict[str, Any]
    origin: tuple[int, str]
    links: bool = False


@dataclass
class EventPlan:
    """The statements of one event (step `step`, at .tom `line`): sent together.

    `minds` are the agents whose mind graphs it writes; `bound` names the parameters that
    were read from the graphs just before the event (tomc/compiler/reads.py); `perspectives`
    and `held` (the versions it leaves open) are what the compiler records once the event
    is committed (`Compiler.accept`)."""

    step: int
    line: int
    text: str
    statements: list[Statement] = field(default_factory=list)
    minds: tuple[str, ...] = ()
    bound: tuple[str, ...] = ()
    perspectives: dict[str, Any] = field(default_factory=dict, repr=False)
    held: dict[Any, Any] = field(default_factory=dict, repr=False)


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

    def graph(self, target: Optional[str]) -> str:
        """The graph a statement for `target` (WORLD or an agent) runs on."""
        return self.world if target is WORLD else self.minds[target]

    def staged(self, suffix: str) -> "GraphNames":
        """Every name with `suffix` appended."""
        return GraphNames(self.world + suffix, {a: n + suffix for a, n in self.minds.items()})

    def with_agents(self, agents: list[str]) -> "GraphNames":
        """These names plus mind graphs for `agents` (declared later), named alike."""
        prefix = self.world.removesuffix("world") + "mind:"
        return GraphNames(self.world, {**self.minds,
                                       **{a: prefix + graph_key(a) for a in agents}})

    @property
    def revision_key(self) -> str:
        """The plain key every committed change of the scenario increments (WATCHed by
        writers: tomc/runtime/transactions.py). `world` ends its graph name, so this key
        can be no graph's name."""
        return self.world + ":rev"


def graph_names(scenario: str, agents: list[str], prefix: str = "tom") -> GraphNames:
    """`tom:<scenario>:world` and `tom:<scenario>:mind:<agent>`, names through `graph_key`."""
    key = graph_key(scenario)
    return GraphNames(f"{prefix}:{key}:world",
                      {a: f"{prefix}:{key}:mind:{graph_key(a)}" for a in agents})


@dataclass
class Plan:
    """Everything a run executes for one scenario, and what `tomc compile` prints."""

    scenario: str
    graphs: GraphNames
    setup: list[Statement]
    events: list[EventPlan]

    def all_statements(self) -> list[Statement]:
        """Setup, then every event's statements, in execution order."""
        return [*self.setup, *(s for e in self.events for s in e.statements)]


def describe_target(statement: Statement, graphs: GraphNames) -> str:
    """Human text for where a statement runs: `world graph NAME` or `mind graph NAME`."""
    if statement.graph is WORLD:
        return f"world graph {graphs.world}"
    return f"mind graph {graphs.mind(statement.graph)}"

