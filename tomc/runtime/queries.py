"""Answering `expect` and `ask` about beliefs with one Cypher read each.

`belief(chain, key, step)` reads the chain's mind graph (the world graph for the truth): the
versions held at the step (knowledge time), or valid on a date (valid time), starting from
the chain that stores the key for it (its owner: the engine knows it, and passes its node
id), each with the event behind it as stored on the version, all in one query. `ready` reads
every step of a procedure the same way, and its statuses and verdict, in one query too.
"""

from __future__ import annotations

from typing import Optional

from tomc.answers import Answer, Provenance
from tomc.compiler.plan import GraphNames
from tomc.compiler.templates import render
from tomc.dsl.program import QueryModel, ReadyQuery
from tomc.readiness import ReadyAnswer, StepAnswer
from tomc.runtime.connection import Database


def belief_read(graphs: GraphNames, query: QueryModel,
                owner: Optional[int]) -> tuple[str, str, dict]:
    """(graph name, template, parameters) of the Cypher read behind an expect or ask;
    `owner` is the node id of the perspective that stores the key for the query's chain
    (FalkorEngine.owner_id; None where no graph is at hand: `tomc compile`). Render the
    template with `belief_cypher`."""
    graph = graphs.mind(query.chain[0]) if query.chain else graphs.world
    template = "read_valid.cypher" if query.on_date else "read_belief.cypher"
    return graph, template, {"owner": owner, "chain": list(query.chain), "key": query.key,
                             "step": query.step, "date": query.on_date}


def belief_cypher(template: str, current: bool = False, by_chain: bool = False) -> str:
    """The Cypher of a belief read's `template`. `current`: the caller knows the graph
    holds no event after the query's step, so a read of knowledge time walks only the
    owner's open versions (read_belief.cypher). `by_chain`: the owner is found inside the
    query from the chain (owner_by_chain.cypher), not given by node id."""
    return render(template, current=current and template == "read_belief.cypher",
                  by_chain=by_chain)


def answer(db: Database, graphs: GraphNames, query: QueryModel,
           owner: Optional[int]) -> Answer:
    """Evaluate one expect or ask at its step, on the scenario's `graphs`."""
    graph, template, params = belief_read(graphs, query, owner)
    return answer_from_rows(query, db.read(graph, belief_cypher(template), params))


def answer_from_rows(query: QueryModel, rows: list[dict]) -> Answer:
    """The answer to `query` from the rows of its belief read (read_belief / read_valid)."""
    provenance = [Provenance(r["since"], r["kind"], r["text"], r["line"],
                             sorted(r["witnesses"] or []), r["source"], list(r["support"] or []),
                             r["rule"]) for r in rows if r["kind"] is not None]
    contested = sorted({v for r in rows for v in r["contested"]})
    return Answer(query, sorted(r["value"] for r in rows), provenance, contested)


def ready_read(graphs: GraphNames, query: ReadyQuery) -> tuple[str, str, dict]:
    """(graph name, template, parameters) of the read behind `ask/expect ready`."""
    graph = graphs.mind(query.chain[0]) if query.chain else graphs.world
    template = "read_ready_valid.cypher" if query.on_date else "read_ready.cypher"
    requires = [{"key": r.key, "value": r.value} for r in query.procedure.requires]
    return graph, template, {
        "agents": list(query.chain), "requires": requires, "step": query.step,
        "date": query.on_date}


def ready(db: Database, graphs: GraphNames, query: ReadyQuery) -> ReadyAnswer:
    """Evaluate one `ask/expect ready` at its step, on the scenario's `graphs`."""
    graph, template, params = ready_read(graphs, query)
    return ready_from_rows(query, db.read(graph, render(template), params))


def ready_from_rows(query: ReadyQuery, rows: list[dict]) -> ReadyAnswer:
    """The answer from the one row of read_ready.cypher: statuses and verdict as Cypher
    computed them; each step's sources, authority and caveats gathered over its values."""
    (row,) = rows
    steps = []
    for requirement, step in zip(query.procedure.requires,
                                 sorted(row["steps"], key=lambda s: s["index"])):
        held = step["held"]
        steps.append(StepAnswer(
            requirement, step["status"], sorted(h["value"] for h in held),
            sorted({s for h in held for s in h["support"]}),
            max((h["authority"] for h in held), default=None),
            sorted({v for h in held for v in h["rivals"]})))
    return ReadyAnswer(query, row["verdict"], steps)
