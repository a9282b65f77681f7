"""The belief view on FalkorDB: every analysis read is a Cypher read of the scenario's graphs.

Chains are read from the mind graph of their first agent (the truth from the world graph),
one query per graph for however many chains; events and who-told-whom paths from the world
graph. Reads are cached for the life of the view (a view is of one step; nothing it reads
changes). Cross-graph joins (a chain against the perspective it models, in another mind
graph) happen in Python, in tomc/analysis/, over these rows.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from tomc.analysis.view import Chain, EventInfo, Held, Rival, ToldPath
from tomc.compiler.lower import lower_events
from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.program import EventModel, ScenarioModel
from tomc.runtime.connection import Database
from tomc.runtime.executor import Executor
from tomc.runtime.forks import fork, written_minds


class GraphView:
    """A BeliefView (tomc/analysis/view.py) of `graphs` on `db`, as of `step`."""

    def __init__(self, db: Database, graphs: GraphNames, scenario: ScenarioModel, step: int):
        self.db = db
        self.graphs = graphs
        self.scenario = scenario
        self.step = step
        self._held: dict[Chain, list[Held]] = {}
        self._superseded: dict[Chain, list[Held]] = {}
        self._events: list[EventInfo] | None = None

    def held(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions `chains` hold at the view's step (read_held.cypher)."""
        return self._read("read_held.cypher", self._held, chains)

    def superseded(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions `chains` had closed by the view's step (read_superseded.cypher)."""
        return self._read("read_superseded.cypher", self._superseded, chains)

    def events(self) -> list[EventInfo]:
        """Every event up to the view's step, with witnesses (read_events.cypher)."""
        if self._events is None:
            rows = self._rows(self.graphs.world, "read_events.cypher", {"step": self.step})
            self._events = [EventInfo(r["step"], r["kind"], r["text"], r["line"],
                                      tuple(sorted(r["witnesses"]))) for r in rows]
        return self._events

    def told_paths(self, holder: str, key: str, value: str, since: int) -> list[ToldPath]:
        """Who-told-whom paths to `holder` (read_told_paths.cypher, a variable-length path
        query over the TOLD edges of the world graph)."""
        rows = self._rows(self.graphs.world, "read_told_paths.cypher",
                          {"holder": holder, "key": key, "value": value, "since": since})
        return [ToldPath(tuple(r["agents"]), tuple(r["steps"])) for r in rows]

    @contextmanager
    def simulate(self, events: Sequence[EventModel]) -> Iterator["GraphView"]:
        """Fork the graphs `events` can write (GRAPH.COPY), run the events' compiled
        statements on the forks, and yield a view of them; the forks are dropped after."""
        with fork(self.db, self.graphs, written_minds(events, self.graphs.agents)) as forked:
            Executor(self.db).apply(forked, lower_events(self.scenario, list(events)))
            yield GraphView(self.db, forked, self.scenario, events[-1].step)

    def _read(self, template: str, cache: dict[Chain, list[Held]],
              chains: Iterable[Chain]) -> list[Held]:
        wanted = list(dict.fromkeys(chains))
        by_graph: dict[str, list[Chain]] = {}
        for chain in wanted:
            if chain not in cache:
                graph = self.graphs.mind(chain[0]) if chain else self.graphs.world
                by_graph.setdefault(graph, []).append(chain)
        for graph, missing in by_graph.items():
            for chain in missing:
                cache[chain] = []
            rows = self._rows(graph, template, {"chains": [list(c) for c in missing],
                                                "step": self.step})
            for r in rows:
                chain = tuple(r["chain"])
                cache[chain].append(Held(
                    chain, r["key"], r["value"], r["since"], r["until"], r["kind"], r["rule"],
                    r["source"], tuple(r["support"] or ()), r["authority"],
                    tuple(sorted((Rival(x["value"], x["source"], x["authority"], x["step"],
                                        x["kind"]) for x in r["rivals"]),
                                 key=lambda x: (x.step, x.value)))))
        return [h for chain in wanted for h in cache[chain]]

    def _rows(self, graph: str, template: str, params: dict, **context) -> list[dict]:
        return self.db.read(graph, render(template, **context), params)
