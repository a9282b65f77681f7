"""The full-text indexes search reads (docs/language.md, "Search"), made when first needed.

Each mind graph indexes its versions' words (`V.words`), the world graph its truth's
versions and its events' words (`Event.words`), written by the templates as events happen
(tomc/search_text.py). `ensure` creates a missing index and derives the words of nodes
written before search existed; it writes, so it runs on a writer's connection, before an
agent's session reads (which may not create an index).

FalkorDB 4.16 and 4.22: `db.idx.fulltext.createNodeIndex({label, stopwords: []}, 'words')`,
`db.idx.fulltext.queryNodes(label, query)`; a query on a graph without the index returns no
row; creating it twice is an error ("already indexed"), so `db.indexes()` is read first.
An index is built in the background: on 10,000 versions a query right after creating it
found nothing (`status` reads `[Indexing] 5710/30000: UNDER CONSTRUCTION`), so `ensure`
waits until every index it needs reads OPERATIONAL (up to WAIT seconds).
"""

from __future__ import annotations

import time
from typing import Sequence

from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.runtime.connection import Database
from tomc.search_text import words

BATCH = 500
WAIT = 120.0


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
        indexed = _fulltext(db, graph)
        missing = [label for label in labels if label not in indexed]
        if missing:
            rows = [{"id": r["id"], "words": words(*r["parts"])}
                    for r in db.read(graph, render("read_unsearchable.cypher"), {})]
            for start in range(0, len(rows), BATCH):
                db.write(graph, render("set_words.cypher"), {"rows": rows[start:start + BATCH]})
            for label in missing:
                db.write(graph, render("search_index.cypher", label=label), {})
            indexed = _fulltext(db, graph)
        deadline = time.monotonic() + WAIT
        while any("OPERATIONAL" not in indexed.get(label, "OPERATIONAL") for label in labels):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the search index of {graph} is still being built "
                                   f"after {WAIT:.0f} s")
            time.sleep(0.02)
            indexed = _fulltext(db, graph)


def _fulltext(db: Database, graph: str) -> dict[str, str]:
    """{label: status} of the graph's full-text indexes (status "OPERATIONAL" when built;
    a server that does not say is taken as built)."""
    return {r["label"]: str(r.get("status") or "OPERATIONAL")
            for r in db.read(graph, render("read_indexes.cypher"), {})
            if "FULLTEXT" in str(r.get("types"))}
