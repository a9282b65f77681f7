"""Search by meaning inside FalkorDB: one Meaning node per fact a graph holds, with its
vector, in a vector index of that graph (docs/language.md, "Search by meaning").

    vectors = GraphVectors(db)
    vectors.similar(embedder, query_vector, {"so:w1:mind:Maya": {("refund.status",
                    "approved"): "refund status: approved"}}, k=10, wanted=set())
    -> {("refund.status", "approved"): 0.83, ...}

Each graph is its own index, so an agent's recall reads its own mind graph and nothing
else, by construction. A fact is (its key lowercased, its value); its node keeps the text
embedded and the model (the embedder's label) that embedded it. `similar` first embeds
what is missing (a fact new to the graph, or whose text changed), in batches, then asks
the index for the `k` nearest and computes the similarity of the `wanted` facts it did not
return (found by words, tomc/analysis/recall.py). A graph whose vectors another model made
is embedded again whole: its nodes and index go first (the dimension may differ).

FalkorDB 4.16 and 4.22 alike (docs/falkordb.md checks 11.4, 11.5): `CREATE VECTOR INDEX FOR (m:L)
ON (m.p) OPTIONS {dimension, similarityFunction: 'cosine'}`, `db.idx.vector.queryNodes(L,
p, k, vecf32($v))` yields the cosine distance as `score`, `vec.cosineDistance` the same on
one node; a query vector of another dimension is an error on both (worded differently).
Writes go on a writer's connection: an agent's session embeds on the memory's writer, as
the full-text index is made (tomc/runtime/search_index.py), and reads its own graph only.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from tomc.compiler.templates import render
from tomc.runtime.connection import Database

BATCH = 256  # facts embedded and written per round trip
Fact = tuple[str, str]  # (key lowercased, value)


class Embedder(Protocol):
    label: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class GraphVectors:
    """The vectors of facts, stored in the graphs they are held in (module docstring)."""

    def __init__(self, db: Database):
        self.db = db

    def similar(self, embedder: Embedder, vector: list[float],
                facts: Mapping[str, Mapping[Fact, str]], k: int,
                wanted: set[Fact]) -> dict[Fact, float]:
        """{fact: cosine similarity to `vector`}: per graph of `facts` ({graph: {fact:
        text}}), its `k` nearest facts and those of `wanted` it holds; a fact held in
        several graphs counts its best."""
        out: dict[Fact, float] = {}
        stored = set(self.db.graph_names())
        for graph, held in facts.items():
            if graph not in stored or not held:
                continue
            self._embedded(graph, held, embedder)
            rows = self.db.read(graph, render("read_meaning_near.cypher"),
                                {"k": min(k, len(held)), "vector": vector})
            near = {(r["key"], r["value"]): float(r["similarity"]) for r in rows
                    if (r["key"], r["value"]) in held}
            rest = [{"key": f[0], "value": f[1]} for f in wanted & held.keys() - near.keys()]
            if rest:
                rows = self.db.read(graph, render("read_meaning_of.cypher"),
                                    {"facts": rest, "vector": vector})
                near.update({(r["key"], r["value"]): float(r["similarity"]) for r in rows})
            for fact, similarity in near.items():
                out[fact] = max(similarity, out.get(fact, -1.0))
        return out

    def _embedded(self, graph: str, held: Mapping[Fact, str], embedder: Embedder) -> None:
        """Every fact of `held` has its vector in `graph`, made by `embedder`, and the
        graph's vector index exists."""
        stored = {(r["key"], r["value"]): (r["text"], r["model"])
                  for r in self.db.read(graph, render("read_meanings.cypher"), {})}
        if any(model != embedder.label for _, model in stored.values()):
            self.db.write(graph, render("meaning_clear.cypher"), {})
            self._drop_index(graph)
            stored = {}
        missing = [(fact, text) for fact, text in held.items()
                   if stored.get(fact) != (text, embedder.label)]
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            vectors = embedder.embed([text for _, text in batch])
            if start == 0:
                self._create_index(graph, len(vectors[0]))
            self.db.write(graph, render("meaning_write.cypher"), {
                "model": embedder.label,
                "rows": [{"key": f[0], "value": f[1], "text": t, "vec": v}
                         for (f, t), v in zip(batch, vectors)]})

    def _create_index(self, graph: str, dimension: int) -> None:
        """The vector index and the range index on Meaning.key, unless there already."""
        kinds = _meaning_indexes(self.db, graph)
        if "key" not in kinds:
            self.db.write(graph, render("meaning_key_index.cypher"), {})
        if "vec" not in kinds:
            self.db.write(graph, render("meaning_index.cypher", dimension=dimension), {})

    def _drop_index(self, graph: str) -> None:
        if "vec" in _meaning_indexes(self.db, graph):
            self.db.write(graph, render("meaning_drop_index.cypher"), {})


def _meaning_indexes(db: Database, graph: str) -> set[str]:
    """The properties of Meaning nodes the graph indexes (`key`: range, `vec`: vector)."""
    return {prop for row in db.read(graph, render("read_indexes.cypher"), {})
            if row.get("label") == "Meaning" for prop in (row.get("types") or {})}
