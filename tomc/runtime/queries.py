"""Answering `expect` and `ask` with Cypher reads of the scenario's graphs.

`belief(chain, key, step)` reads the chain's mind graph (the world graph for the truth);
provenance reads the event of the step a belief was adopted at, with its witnesses.
"""

from __future__ import annotations

from typing import Optional

from tomc.answers import Answer, Provenance
from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.program import QueryModel
from tomc.runtime.connection import Database


def belief_read(graphs: GraphNames, chain: tuple[str, ...], key: str, step: int,
                on_date: Optional[str] = None) -> tuple[str, str, dict]:
    """(graph name, template, parameters) of the Cypher read behind `belief()`: the chain's
    mind graph (the world graph for the truth), knowledge time or valid time."""
    graph = graphs.mind(chain[0]) if chain else graphs.world
    template = "read_valid.cypher" if on_date else "read_belief.cypher"
    return graph, template, {"agents": list(chain), "key": key, "step": step, "date": on_date}


def belief(db: Database, graphs: GraphNames, chain: tuple[str, ...], key: str, step: int,
           on_date: Optional[str] = None) -> list[dict]:
    """Rows {value, since, source, support, rule, contested} of `chain` about `key`: held
    at `step` (knowledge time), or, with `on_date`, adopted by `step` and valid in the world
    on that date (valid time); the support and rivals are those of `step`."""
    graph, template, params = belief_read(graphs, chain, key, step, on_date)
    return db.read(graph, render(template), params)


def event(db: Database, graphs: GraphNames, step: int) -> Optional[dict]:
    """The event at `step` with its witnesses, or None."""
    rows = db.read(graphs.world, render("read_event.cypher"), {"step": step})
    return rows[0] if rows else None


def answer(db: Database, graphs: GraphNames, query: QueryModel) -> Answer:
    """Evaluate one expect or ask at its step, on the scenario's `graphs`."""
    rows = belief(db, graphs, query.chain, query.key, query.step, query.on_date)
    values = sorted(r["value"] for r in rows)
    provenance = []
    for row in rows:
        found = event(db, graphs, row["since"])
        if found:
            provenance.append(Provenance(found["step"], found["kind"], found["text"],
                                         found["line"], sorted(found["witnesses"]),
                                         row["source"], list(row["support"] or []),
                                         row["rule"]))
    contested = sorted({v for r in rows for v in r["contested"]})
    return Answer(query, values, provenance, contested)
