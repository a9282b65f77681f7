"""The full-text indexes search reads (docs/language.md, "Search"), made when first needed.

Each mind graph indexes its versions' words (`V.words`), the world graph its truth's
versions and its events' words (`Event.words`), written by the templates as events happen
(tomc/search_text.py). `ensure` creates a missing index and derives the words of nodes
written before search existed; it writes, so it runs on a writer's connection, before an
agent's read-only user reads (an agent's user cannot create an index).

FalkorDB 4.16 and 4.22: `db.idx.fulltext.createNodeIndex({label, stopwords: []}, 'words')`,
`db.idx.fulltext.queryNodes(label, query)`; a query on a graph without the index returns no
row; creating it twice is an error ("already indexed"), so `db.indexes()` is read first.
"""

from __future__ import annotations

from typing import Sequence

from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.runtime.connection import Database
from tomc.search_text import words

BATCH = 500


def ensure(db: Database, graphs: GraphNames, minds: Sequence[str], world: bool) -> None:
    """The full-text indexes of the mind graphs of `minds` (`V`) and, if `world`, of the
    world graph (`V`: the truth, `Event`) exist, and every node of them has its words.
    Idempotent; one read per graph when done."""
    wanted = [(graphs.mind(a), ("V",)) for a in minds]
    if world:
        wanted.append((graphs.world, ("V", "Event")))
    stored = set(db.graph_names())
    for graph, labels in wanted:
        if graph not in stored:  # not written yet: nothing to find
            continue
        indexed = {r["label"] for r in db.read(graph, render("read_indexes.cypher"), {})
                   if "FULLTEXT" in str(r["types"])}
        missing = [label for label in labels if label not in indexed]
        if not missing:
            continue
        rows = [{"id": r["id"], "words": words(*r["parts"])}
                for r in db.read(graph, render("read_unsearchable.cypher"), {})]
        for start in range(0, len(rows), BATCH):
            db.write(graph, render("set_words.cypher"), {"rows": rows[start:start + BATCH]})
        for label in missing:
            db.write(graph, render("search_index.cypher", label=label), {})
