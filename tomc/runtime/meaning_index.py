"""Search by meaning inside FalkorDB: one Meaning node per fact a graph holds, with its
vector, in a vector index of that graph (docs/language.md, "Search by meaning").

    vectors = GraphVectors(db)
    vectors.sync(embedder, "so:w1:mind:Maya", step=12)   # embeds what is new since
    vectors.near("so:w1:mind:Maya", query_vector, k=10)  -> {("refund.status", "approved"): 0.83}
    vectors.of("so:w1:mind:Maya", query_vector, {("refund.eta", "friday")})  -> {...: 0.41}

Each graph is its own index, so an agent's recall reads its own mind graph and nothing
else, by construction. A fact is (its key lowercased, its value); its node keeps the text
embedded (tomc/embedders.py `fact_text`) and the model (the embedder's label) that embedded
it. A `MeaningMark` node says up to which step, by which model and in an index of which
dimension the graph is embedded, so `sync` reads only that when nothing is new, else the
versions adopted since (a scan of the graph's versions' steps), and embeds the facts among
them that have no vector yet, in batches. A graph whose
vectors another model made is embedded again whole: its nodes, mark and vector index go
first (the dimension may differ). After an undo (the memory's step below the mark) the
graph is read again whole, and only facts without a vector are embedded.

FalkorDB 4.16 and 4.22 alike (docs/falkordb.md checks 11.4, 11.5): `CREATE VECTOR INDEX
FOR (m:L) ON (m.p) OPTIONS {dimension, similarityFunction: 'cosine'}`,
`db.idx.vector.queryNodes(L, p, k, vecf32($v))` yields the cosine distance as `score`,
`vec.cosineDistance` the same on one node; a query vector of another dimension is an error
on both (worded differently). `sync` writes, on a writer's connection: an agent's session
embeds on the memory's writer, as the full-text index is made
(tomc/runtime/search_index.py), and reads its own graph only.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import redis

from tomc.compiler.templates import render
from tomc.embedders import fact_text
from tomc.runtime.connection import Database, query_command

BATCH = 256  # facts embedded and written per round trip
Fact = tuple[str, str]  # (key lowercased, value)


class Embedder(Protocol):
    label: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class _Gone(Exception):
    """The graph being embedded was deleted (its memory dropped)."""


class GraphVectors:
    """The vectors of facts, stored in the graphs they are held in (module docstring)."""

    def __init__(self, db: Database):
        self.db = db
        self._indexed: set[str] = set()  # graphs synced that have their vector index

    def sync(self, embedder: Embedder, graph: str, step: int) -> None:
        """Every fact `graph` holds by `step` has its vector from `embedder`: one read when
        nothing is new. A graph deleted meanwhile (its memory dropped) is left deleted."""
        try:
            self._sync(embedder, graph, step)
        except _Gone:
            pass

    def _sync(self, embedder: Embedder, graph: str, step: int) -> None:
        try:
            marks = self.db.read(graph, render("read_meaning_mark.cypher"), {})
        except redis.ResponseError as err:
            if "empty key" in str(err):  # the graph is not written yet: nothing to embed
                return
            raise
        after, dimension = 0, None
        if marks and marks[0]["model"] != embedder.label:
            self._write(graph, render("meaning_clear.cypher"), {})
            if "vec" in _meaning_indexes(self.db, graph):
                self._write(graph, render("meaning_drop_index.cypher"), {})
        elif marks:
            after = marks[0]["step"] if marks[0]["step"] <= step else 0
            dimension = marks[0]["dimension"]
        if dimension is not None:
            self._indexed.add(graph)
        if marks and after == step:
            return
        facts = {(r["key"].lower(), r["value"]): fact_text(r["key"], r["value"])
                 for r in self.db.read(graph, render("read_unembedded.cypher"),
                                       {"after": after, "step": step})}
        if facts and dimension is not None:
            for r in self.db.read(graph, render("read_meaning_has.cypher"), {
                    "facts": [{"key": k, "value": v} for k, v in facts]}):
                facts.pop((r["key"], r["value"]), None)
        missing = sorted(facts.items())
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            vectors = embedder.embed([text for _, text in batch])
            if dimension is None:
                dimension = len(vectors[0])
                self._create_index(graph, dimension)
                self._indexed.add(graph)
            self._write(graph, render("meaning_write.cypher"), {
                "model": embedder.label,
                "rows": [{"key": f[0], "value": f[1], "text": t, "vec": v}
                         for (f, t), v in zip(batch, vectors)]})
        self._write(graph, render("meaning_mark.cypher"),
                      {"step": step, "model": embedder.label, "dimension": dimension})

    def _write(self, graph: str, cypher: str, params: dict) -> None:
        """Write `cypher` on `graph` only while the graph exists (under WATCH): a write
        query makes its graph's key, so a memory dropped during a sync (the applier's
        embedding thread runs beside) would get a graph of vectors back, and a memory
        made again under its name a mark it never earned. Raises _Gone."""
        with self.db.redirected(graph), self.db.redis.pipeline() as pipe:
            try:
                pipe.watch(graph)
                if not pipe.exists(graph):
                    raise _Gone(graph)
                pipe.multi()
                pipe.execute_command(*query_command(graph, cypher, params))
                pipe.execute()
            except redis.WatchError:
                raise _Gone(graph) from None

    def near(self, graph: str, vector: list[float], k: int) -> dict[Fact, float]:
        """{fact: cosine similarity} of the `k` facts of `graph` nearest `vector` (after
        `sync`)."""
        if graph not in self._indexed:
            return {}
        rows = self.db.read(graph, render("read_meaning_near.cypher"), {"k": k, "vector": vector})
        return {(r["key"], r["value"]): float(r["similarity"]) for r in rows}

    def of(self, graph: str, vector: list[float], facts: set[Fact]) -> dict[Fact, float]:
        """{fact: cosine similarity} of those of `facts` that `graph` has a vector of."""
        if graph not in self._indexed or not facts:
            return {}
        rows = self.db.read(graph, render("read_meaning_of.cypher"), {
            "facts": [{"key": k, "value": v} for k, v in sorted(facts)], "vector": vector})
        return {(r["key"], r["value"]): float(r["similarity"]) for r in rows}

    def _create_index(self, graph: str, dimension: int) -> None:
        """The vector index and the range index on Meaning.key, unless there already."""
        kinds = _meaning_indexes(self.db, graph)
        try:
            if "key" not in kinds:
                self._write(graph, render("meaning_key_index.cypher"), {})
            if "vec" not in kinds:
                self._write(graph, render("meaning_index.cypher", dimension=dimension), {})
        except redis.ResponseError as err:
            if "already indexed" not in str(err):  # made meanwhile by another sync: kept
                raise


def _meaning_indexes(db: Database, graph: str) -> set[str]:
    """The properties of Meaning nodes the graph indexes (`key`: range, `vec`: vector)."""
    return {prop for row in db.read(graph, render("read_indexes.cypher"), {})
            if row.get("label") == "Meaning" for prop in (row.get("types") or {})}
