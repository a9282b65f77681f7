"""The plain Redis keys of a memory other than its graphs, named in one place.

A memory `NAME` keeps, beside its graphs (tomc/engine/memory.py) and revision key:

- `tomem:NAME:incarnation`: an id made when the memory is created; a session attached to
  an earlier memory of the same name is refused (docs/storage.md, "Incarnations");
- `tomem:NAME:keys`: the hash of idempotency keys, `KEY#I` -> the step statement I of the
  write called KEY committed as (0 for a declaration), written in the statement's own
  transaction (docs/storage.md, "Retries");
- `tomem:NAME:queue`, `tomem:NAME:processing`, `tomem:NAME:applier`,
  `tomem:NAME:reply:ID`: the applier's request list, the requests it is applying, its
  lease, and the reply list of one request (tomc/engine/applier.py).

This module imports nothing heavy: the thin client of `tomc memory apply` uses it.
"""

from __future__ import annotations

from tomc.names import graph_key

PREFIX = "tomem"


def memory_key(name: str, *parts: str) -> str:
    """The key `tomem:<name>:<parts...>` of memory `name` (the name through `graph_key`)."""
    return ":".join((PREFIX, graph_key(name), *parts))


def idempotency_field(key: str, index: int) -> str:
    """The field of statement `index` of the write called `key` in `memory_key(.., 'keys')`."""
    return f"{key}#{index}"


def appliers_key(*parts: str) -> str:
    """The server-wide keys of the appliers `tomc serve` runs: `tomc:appliers` (its
    heartbeat) and `tomc:appliers:wake` (names of memories a request was queued for)."""
    return ":".join(("tomc", "appliers", *parts))
