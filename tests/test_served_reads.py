"""An agent's read run by the applier (tomc/memory/served_reads.py `answer`) is cut after
SERVED_MS on the server: it runs inside MULTI/EXEC, on the main thread, and what tomc's
templates cost follows what the agent's mind holds, so without a bound one question of a
long-lived mind could hold every client (issue 35: any stall an agent causes under 1 s).
A real FalkorDB; the mind graph given many perspectives by hand so a template read is slow."""

from __future__ import annotations

import json
import time

from tomc.api import Session
from tomc.compiler.templates import render
from tomc.memory import catalog, served_reads


def test_a_served_read_is_stopped_at_its_bound_and_says_so(db, fresh, monkeypatch):
    name = fresh("served_bound")
    with Session.attach(name, db=db) as s:
        s.apply("agents Maya, Ben\nrooms r\nMaya, Ben enter r\nBen says a.b = 1")
    mind = catalog.memory_graphs(name, ["Maya"]).mind("Maya")
    fields = {"read": render("read_perspectives.cypher"), "params": {}, "as": "Maya"}
    size = len(json.dumps(fields))
    normal = served_reads.answer(db, name, fields, size)
    assert normal["rows"] and {"id", "agents", "owns"} <= set(normal["rows"][0])
    db.redis.execute_command("GRAPH.QUERY", mind,
                             "UNWIND range(1, 100000) AS i CREATE (:P {agents: [], owns: []})")
    try:
        monkeypatch.setattr(served_reads, "SERVED_MS", 5)
        started = time.perf_counter()
        cut = served_reads.answer(db, name, fields, size)
        took = time.perf_counter() - started
        assert cut["error"] == "failed" and "5 ms" in cut["message"]
        assert "narrower" in cut["message"]
        # (the whole read returns 100,000 rows: far longer than its bound)
        monkeypatch.setattr(served_reads, "SERVED_MS", 25_000)  # (TIMEOUT_MAX: 30 s)
        started = time.perf_counter()
        assert len(served_reads.answer(db, name, fields, size)["rows"]) > 100_000
        assert took < time.perf_counter() - started
    finally:
        db.redis.execute_command("GRAPH.QUERY", mind, "MATCH (p:P) WHERE size(p.agents) = 0 "
                                 "DELETE p")


def test_no_query_takes_a_parameter_name_that_is_not_plain():
    """Names travel unquoted in the `CYPHER name=value` header (tomc/runtime/connection.py
    `query_command`): a name holding Cypher is refused for every caller, not only the
    served reads, which refuse it first with a reply."""
    import pytest

    from tomc.runtime.connection import query_command

    assert query_command("g", "RETURN $a_1", {"a_1": 1})[2].startswith("CYPHER a_1=1 ")
    for name in ("x=1 UNWIND range(1, 9) AS y RETURN y //", "a b", "1a", ""):
        with pytest.raises(ValueError, match="plain name"):
            query_command("g", "RETURN 1", {name: 1})
