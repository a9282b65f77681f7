"""A memory's dead-letter list: the requests its applier could not apply (tomc/memory/
applier.py), newest first, as `tomc memory requests NAME` lists and drops them.

Each entry is JSON: {id (a digest of what was queued), at (UTC, when it was buried),
error (what failed), bytes (the size of what was queued), request (its first
applier.PREVIEW characters)}. The list keeps the newest applier.DEAD_KEEP entries.
"""

from __future__ import annotations

import json
from typing import Sequence

from tomc.runtime.connection import Database
from tomc.runtime.keys import memory_key


def listed(db: Database, name: str) -> list[dict]:
    """The entries of memory `name`'s dead-letter list, newest first."""
    shard = db.shard(memory_key(name))
    with shard.redirected(memory_key(name)):
        raws = shard.redis.lrange(memory_key(name, "dead"), 0, -1)
    return [_entry(raw) for raw in raws]


def drop(db: Database, name: str, ids: Sequence[str] = ()) -> list[str]:
    """Drop the entries whose id is in `ids` (every entry when `ids` is empty); the ids
    dropped."""
    key = memory_key(name, "dead")
    shard = db.shard(memory_key(name))
    dropped = []
    with shard.redirected(memory_key(name)):
        for raw in shard.redis.lrange(key, 0, -1):
            entry = _entry(raw)
            if (not ids or entry["id"] in ids) and shard.redis.lrem(key, 1, raw):
                dropped.append(entry["id"])
    return dropped


def _entry(raw: str) -> dict:
    """An entry as stored (anything else in the list shown as its text)."""
    try:
        entry = json.loads(raw)
    except ValueError:
        entry = None
    if not isinstance(entry, dict):
        return {"id": "", "at": None, "error": "not an entry", "bytes": len(raw),
                "request": raw[:200].encode("utf-8", "surrogateescape").decode(
                    "utf-8", "backslashreplace")}
    return entry
