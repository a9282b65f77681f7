"""The belief view on FalkorDB: every analysis read is a Cypher read of the scenario's graphs.

Chains are read from the mind graph of their first agent (the truth from the world graph),
one query per graph for however many chains; each chain reads a key where it is stored
(itself, or the chain above it it inherits from: tomc/compiler/perspectives.py), inside the
query. Events and who-told-whom paths come from the world graph. Reads are cached for the
life of the view (a view is of one step; nothing it reads changes: history is append-only).
Cross-graph joins (a chain against the perspective it models, in another mind graph)
happen in Python, in tomc/analysis/, over these rows.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

from tomc.beliefs import Chain, Ending, EventInfo, Held, Rival, Standing, ToldPath
from tomc.compiler.plan import GraphNames
from tomc.compiler.standing import Standings
from tomc.compiler.templates import render
from tomc.dsl.program import ScenarioModel
from tomc.runtime import search_index
from tomc.runtime.connection import Database
from tomc.search_text import index_query


class GraphView:
    """A BeliefView (tomc/analysis/view.py) of `graphs` on `db`, as of `step`. Simulations
    run on forks, which the engine makes (`simulator`: tomc/engine/falkordb.py). `indexes`:
    `db` may write, and makes search's full-text indexes when a search needs them (an
    agent's session reads through a `db` that may not: it makes them first)."""

    def __init__(self, db: Database, graphs: GraphNames, scenario: ScenarioModel, step: int,
                 simulator: Optional[Callable] = None, indexes: bool = False):
        self.db = db
        self.indexes = indexes
        self.graphs = graphs
        self.scenario = scenario
        self.step = step
        self.simulator = simulator
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
                                      tuple(sorted(r["witnesses"] or ()))) for r in rows]
        return self._events

    def told_paths(self, holder: str, key: str, value: str, since: int) -> list[ToldPath]:
        """Who-told-whom paths to `holder` (read_told_paths.cypher, a variable-length path
        query over the TOLD edges of the world graph)."""
        rows = self._rows(self.graphs.world, "read_told_paths.cypher",
                          {"holder": holder, "key": key, "value": value, "since": since})
        return [ToldPath(tuple(r["agents"]), tuple(r["steps"])) for r in rows]

    def linked(self, chain: Chain, key: str, follow: int) -> list[tuple[tuple[str, ...], Held]]:
        """The facts on the walk from `key` through links (read_linked.cypher, a bounded
        traversal in one read of the chain's graph), each with its path of subjects."""
        graph = self.graphs.mind(chain[0]) if chain else self.graphs.world
        rows = self._rows(graph, "read_linked.cypher", {
            "chains": [list(chain)], "key": key, "subject": key.rpartition(".")[0] or key,
            "follow": follow, "step": self.step})
        return [(tuple(r["path"]), Held(tuple(r["chain"]), r["key"], r["value"], r["since"],
                                        None, r["kind"], r["rule"], r["source"],
                                        tuple(r["support"] or ()), r["authority"],
                                        published=r["published"],
                                        valid_from=r["valid_from"] or "")) for r in rows]

    def near(self, chain: Chain, subject: str,
             within: int) -> list[tuple[tuple[str, ...], Held]]:
        """The facts within `within` links of `subject` (read_near.cypher, a bounded
        traversal in one read of the chain's graph), each with its path, in walk order."""
        graph = self.graphs.mind(chain[0]) if chain else self.graphs.world
        rows = self._rows(graph, "read_near.cypher", {
            "chains": [list(chain)], "subject": subject, "within": within, "step": self.step})
        return [(tuple(r["path"]), Held(tuple(r["chain"]), r["key"], r["value"], r["since"],
                                        None, r["kind"], r["rule"], r["source"],
                                        tuple(r["support"] or ()), r["authority"],
                                        published=r["published"],
                                        valid_from=r["valid_from"] or "")) for r in rows]

    def found(self, terms: tuple[str, ...], minds: Sequence[str], truth: bool) -> list[Held]:
        """Versions matching `terms`, through each graph's full-text index
        (read_search.cypher; the indexes exist: tomc/runtime/search_index.py)."""
        if self.indexes:
            search_index.ensure(self.db, self.graphs, minds, truth)
        graphs = [self.graphs.mind(a) for a in minds] + ([self.graphs.world] if truth else [])
        found = []
        for graph in graphs:
            for r in self._rows(graph, "read_search.cypher",
                                {"query": index_query(terms), "step": self.step}):
                found.append(Held(tuple(r["chain"]), r["key"], r["value"], r["since"],
                                  r["until"], r["kind"], r["rule"], r["source"],
                                  tuple(r["support"] or ()), r["authority"]))
        return found

    def standing(self, source: str) -> Standing:
        """`source`'s standing after the view's step: the engine's ledger replays the
        scenario's claims (tomc/compiler/standing.py)."""
        return Standings(self.scenario).standing(source, self.step + 1)

    def found_events(self, terms: tuple[str, ...]) -> list[EventInfo]:
        """Events matching `terms`, through the world graph's full-text index
        (read_search_events.cypher)."""
        if self.indexes:
            search_index.ensure(self.db, self.graphs, (), True)
        rows = self._rows(self.graphs.world, "read_search_events.cypher",
                          {"query": index_query(terms), "step": self.step})
        return [EventInfo(r["step"], r["kind"], r["text"], r["line"],
                          tuple(sorted(r["witnesses"] or ()))) for r in rows]

    def simulate(self, events: Sequence):
        """A view after `events` happen on forks of the graphs (the engine's simulator)."""
        if self.simulator is None:
            raise ValueError("this view cannot simulate: it is not of its engine's latest step")
        return self.simulator(events)

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
                                 key=lambda x: (x.step, x.value))),
                    r["published"], r["valid_from"] or "", _ending(r["ending"])))
        return [h for chain in wanted for h in cache[chain]]

    def _rows(self, graph: str, template: str, params: dict) -> list[dict]:
        return self.db.read(graph, render(template), params)


def _ending(row: Optional[dict]) -> Optional[Ending]:
    """What ended a version, from held_versions.cypher's `ending` map (None: not ended)."""
    if row is None:
        return None
    return Ending(row["source"], row["authority"], row["published"], row["valid_to"] or "")
