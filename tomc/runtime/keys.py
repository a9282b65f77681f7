"""Every key of a memory is named here, `memory_key(NAME, ...)`: `tomem:{NAME}:...`, the
braces a Redis Cluster hash tag (one slot, one shard: tomc/memory/catalog.py).

A memory `NAME` keeps, beside its graphs (tomc/memory/catalog.py) and revision key:

- `tomem:{NAME}:incarnation`: an id made when the memory is created; a session attached to
  an earlier memory of the same name is refused (docs/storage.md, "Incarnations");
- `tomem:{NAME}:keys`: the hash of idempotency keys, each scoped to its writer (the
  administrator, or an agent with its own credential): `["WRITER", "KEY", I]` -> the step
  statement I of the write called KEY committed as (0 for a declaration), and `["WRITER",
  "KEY"]` -> a digest of the write's statements, written in the statement's own
  transaction (docs/storage.md, "Retries");
- `tomem:{NAME}:public`, `tomem:{NAME}:seen:AGENT`: the agents' view of the world, the
  header, step and declarations, and the events AGENT witnessed (tomc/memory/agent_view.py,
  whose names are these through the memory's graph names);
- `tomem:{NAME}:queue`, `tomem:{NAME}:queue:USER`, `tomem:{NAME}:bell`,
  `tomem:{NAME}:processing`, `tomem:{NAME}:applier`, `tomem:{NAME}:reply:ID`,
  `tomem:{NAME}:dead`: the administrator's request list and each agent user's own, the
  list every writer rings after queueing, the requests the applier is applying, its
  lease, the reply list of one request, and the requests it could not apply
  (tomc/memory/submit.py, tomc/memory/applier.py, `tomc memory requests`).

This module imports nothing heavy: the thin client of `tomc memory apply` uses it.
"""

from __future__ import annotations

import json
from typing import Optional
from urllib.parse import unquote

from tomc.names import graph_key

PREFIX = "tomem"


def memory_tag(name: str) -> str:
    """The hash tag of memory `name`: `{KEY}` with KEY its name through `graph_key`, and `{`
    and `}` escaped too (`%7B`, `%7D`), so the tag is the whole name and ends where it
    should (Redis hashes what lies between the first `{` and the next `}`)."""
    return "{" + graph_key(name).replace("{", "%7B").replace("}", "%7D") + "}"


def memory_key(name: str, *parts: str) -> str:
    """The key `tomem:{NAME}:PART:...` of memory `name`: every key of a memory is named
    here, so they all share its hash tag (one slot, one shard). Each part goes through
    `graph_key` (an agent's name cannot add a `:` or a glob character);
    `memory_key("support", "mind", "Maya")` is `tomem:{support}:mind:Maya`."""
    return ":".join([PREFIX, memory_tag(name), *(graph_key(p) for p in parts)])



def idempotency_field(writer: str, key: str, index: int) -> str:
    """The field of statement `index` of the write `writer` called `key` in
    `memory_key(.., 'keys')`: JSON, so no writer's key can spell another writer's field."""
    return json.dumps([writer, key, index])


def digest_field(writer: str, key: str) -> str:
    """The field holding the digest of the statements of the write `writer` called `key`."""
    return json.dumps([writer, key])


def appliers_key(*parts: str) -> str:
    """The server-wide keys of the appliers `tomc serve` runs: `tomc:appliers` (its
    heartbeat), `tomc:appliers:wake` (the sorted set of memories a request was queued
    for) and `tomc:appliers:held` (the sorted set of held leases, by when each lapses)."""
    return ":".join(("tomc", "appliers", *parts))


def memory_name(key: str) -> Optional[str]:
    """The memory whose world graph is `key` (`tomem:{NAME}:world`), else None."""
    parts = key.split(":")
    if len(parts) != 3 or parts[0] != PREFIX or parts[2] != "world":
        return None
    tag = parts[1]
    if not (tag.startswith("{") and tag.endswith("}")):
        return None
    return unquote(tag[1:-1])
