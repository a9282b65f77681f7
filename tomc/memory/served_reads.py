"""An agent's reads of its own mind graph, run by the memory's applier (docs/security.md, "An
agent cannot hold anyone else").

An agent's own FalkorDB user may run no Cypher at all: any query text it could send, FalkorDB
would run while holding the mind graph, and a commit into that mind (an announcement to the
agent's room) would wait for it inside its MULTI/EXEC on the server's main thread, holding
every client, for as long as the query runs (`UNWIND range(...)` builds its list before any
bound is checked: ~30 s). So the session of an agent's own credential asks the applier to
run one of tomc's own read templates (`TEMPLATES`, rendered without options: what
tomc/runtime/queries.py and tomc/runtime/graph_view.py send) on the agent's mind graph,
with the session's parameters, and reads the rows from the reply. The applier runs it as
the administrator, inside MULTI/EXEC like every read of tomc's (never half an event), cut
after SERVED_MS on the server, and anything else is refused.

A read request, RPUSHed on the memory's queue like a write (tomc/memory/submit.py) and
signed with the agent's password: {id, read (the Cypher text), params (an object), reply,
as (the agent), mac}. Its reply: {rows: [{column: value}]} or {error: refused | failed,
message}. A request is at most MAX_BYTES.

    reads = ServedReads(agent_db, "support", "Maya")
    reads.read(graphs.mind("Maya"), render("read_perspectives.cypher"), {})   # rows
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache

import redis

from tomc.compiler.templates import render
from tomc.memory import catalog, submit
from tomc.runtime.connection import Database
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable

# The templates an agent's session reads its own mind graph with.
TEMPLATES = ("read_perspectives.cypher", "read_belief.cypher", "read_valid.cypher",
             "read_ready.cypher", "read_ready_valid.cypher", "read_held.cypher",
             "read_superseded.cypher", "read_linked.cypher", "read_near.cypher",
             "read_search.cypher")
# The largest read request the applier runs (bytes of its JSON): a session's parameters
# are a few chains and a key.
MAX_BYTES = 64 * 1024
# How long one read may run on the server (ms, FalkorDB's TIMEOUT, which holds inside
# MULTI/EXEC on both versions: docs/falkordb.md 6.21). A read in MULTI/EXEC runs on the
# main thread and holds every client meanwhile, and what tomc's templates cost follows
# what the mind holds (every belief of every chain, at 100,000 events): this bounds the
# stall any one question of an agent's can cause (docs/security.md).
SERVED_MS = 500


@lru_cache(maxsize=1)
def allowed() -> frozenset[str]:
    """The Cypher texts an agent's read may hold: `TEMPLATES`, rendered."""
    return frozenset(render(template) for template in TEMPLATES)


class ServedReads:
    """The reads of agent `agent`'s session of memory `name`, through its own user `db`:
    `read(graph, cypher, params)`, as `Database.read`, for its own mind graph only."""

    def __init__(self, db: Database, name: str, agent: str):
        self.db = db
        self.name = name
        self.agent = agent
        self.graph = catalog.memory_graphs(name, [agent]).mind(agent)

    def read(self, graph: str, cypher: str, params: dict) -> list[dict]:
        """The rows of `cypher` on `graph` (the agent's mind graph), run by the applier.
        Raises AccessDenied (another graph, or a query not among tomc's reads),
        DatabaseUnavailable (no applier answered, or the read failed)."""
        if graph != self.graph or cypher not in allowed():
            raise AccessDenied(f"{self.agent}'s own credential reads only its own mind graph, "
                               "through tomc's questions (docs/security.md)")
        rid = uuid.uuid4().hex
        fields = {"id": rid, "read": cypher, "params": params,
                  "reply": submit.reply_list(self.db.redis, self.name, rid, self.agent),
                  "as": self.agent}
        try:
            answer = submit.exchange(self.db.redis, self.name, fields, self.db.clustered,
                                     "ask again")
        except submit.NoApplier:
            raise DatabaseUnavailable(
                f"{self.agent}'s own credential reads through the memory's applier, and no "
                f"`tomc serve` took the read of memory {self.name} (docs/security.md)") \
                from None
        if "rows" not in answer:
            raise (AccessDenied if answer.get("error") == "refused" else DatabaseUnavailable)(
                f"the applier of memory {self.name} did not run {self.agent}'s read: "
                f"{answer.get('message')}")
        return answer["rows"]


def well_formed(fields: dict) -> bool:
    """Whether a queued request is a read request of the shape `ServedReads` gives it."""
    return (isinstance(fields.get("read"), str) and isinstance(fields.get("params"), dict)
            and isinstance(fields.get("as"), str)
            and all(isinstance(fields.get(name), str) for name in ("id", "reply", "mac")))


def answer(db: Database, name: str, fields: dict, size: int) -> dict:
    """The reply to the read request `fields` (`size` bytes as queued, signed by its
    agent: the applier checked) of memory `name`: its rows, read by the administrator's
    `db` from the agent's own mind graph, or why not."""
    if fields["read"] not in allowed():
        return {"error": "refused", "message": "an agent's read may only be one of tomc's "
                "read templates (tomc/memory/served_reads.py)"}
    if size > MAX_BYTES:
        return {"error": "refused", "message": f"a read request is at most {MAX_BYTES} bytes"}
    if not _names_plain(fields["params"]):
        # A parameter's name travels unquoted in the query's `CYPHER name=value` header
        # (tomc/runtime/connection.py `query_command`): any other text there is Cypher.
        return {"error": "refused", "message": "a read's parameter names (and the keys of "
                "its maps) are plain names: letters, digits, _"}
    graph = catalog.memory_graphs(name, [fields["as"]]).mind(fields["as"])
    try:
        return {"rows": db.read(graph, fields["read"], fields["params"], SERVED_MS)}
    except redis.ResponseError as err:  # FalkorDB's, on the agent's parameters
        if "timed out" in str(err):
            return {"error": "failed", "message": (
                f"the question ran longer than the {SERVED_MS} ms an agent's read may hold "
                "the server, and was stopped: ask a narrower one (a chain, a key)")}
        return {"error": "failed", "message": f"FalkorDB: {err}"}



_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names_plain(value) -> bool:
    """Whether every key of the maps in `value` (a read's parameters) is a plain name."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _PLAIN.fullmatch(k) and _names_plain(v)
                   for k, v in value.items())
    if isinstance(value, list):
        return all(_names_plain(v) for v in value)
    return True
