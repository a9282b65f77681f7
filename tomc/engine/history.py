"""A memory's events without holding them all: the events up to a checkpoint are read from
the memory's event hash when asked (`StoredEvents`), those after it are held (`History`).

A session attached from a checkpoint (tomc/memory/checkpoint.py) has its checker's state and
its engine's scenario hold a `History`: counting events, the latest ones and appending cost
nothing; an event of the past is read with the few around it (`CHUNK` per round trip) and
kept; only what asks for the whole history (`history()`, an export, an analysis of every
event) reads it all.
"""

from __future__ import annotations

import json
import threading
from typing import Iterator, Sequence, Union

import redis
from pyrsistent import PVector, pvector

from tomc.dsl.program import AnyEvent
from tomc.engine import event_codec
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable

CHUNK = 512  # events read in one HMGET


class StoredEvents:
    """Events 1..`count` of memory hash `key` (field: the step; value: the event as
    event_codec JSON), read a chunk at a time and kept once read."""

    def __init__(self, db: Database, key: str, count: int):
        self.db, self.key, self.count = db, key, count
        self._chunks: dict[int, list[AnyEvent]] = {}
        self._lock = threading.Lock()

    def get(self, index: int) -> AnyEvent:
        """The event at `index` (0-based: step index + 1)."""
        chunk = index // CHUNK
        with self._lock:
            if chunk not in self._chunks:
                self._chunks[chunk] = self._read(chunk)
            return self._chunks[chunk][index % CHUNK]

    def _read(self, chunk: int) -> list[AnyEvent]:
        steps = range(chunk * CHUNK + 1, min(self.count, (chunk + 1) * CHUNK) + 1)
        try:
            found = self.db.redis.hmget(self.key, [str(s) for s in steps])
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not read the events of {self.key}: {err}") \
                from None
        if any(value is None for value in found):
            missing = next(s for s, value in zip(steps, found) if value is None)
            raise DatabaseUnavailable(f"{self.key} has no event {missing}: the memory was "
                                      "dropped or changed by an older tomc; attach again")
        return [event_codec.load(json.loads(value)) for value in found]


class History(Sequence):
    """An immutable sequence of events: `count` stored ones (`StoredEvents`), then `tail`
    (a persistent vector). `extend`, `set` and `evolver` give the next history, as a
    pyrsistent vector does (tomc/dsl/checker.py CheckState keeps either); a slice is a
    list; it equals any sequence of the same events."""

    __slots__ = ("stored", "tail")

    def __init__(self, stored: StoredEvents, tail: PVector = pvector()):
        self.stored, self.tail = stored, tail

    def __len__(self) -> int:
        return self.stored.count + len(self.tail)

    def __getitem__(self, index: Union[int, slice]):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        base = self.stored.count
        return self.stored.get(index) if index < base else self.tail[index - base]

    def __iter__(self) -> Iterator[AnyEvent]:
        for index in range(len(self)):
            yield self[index]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # mutable-looking equality: not a key

    def extend(self, events: Sequence[AnyEvent]) -> "History":
        return History(self.stored, self.tail.extend(events))

    def set(self, index: int, event: AnyEvent) -> "History":
        """The history with the event at `index` replaced: only one after the stored ones
        (a memory numbers the events it has just checked)."""
        base = self.stored.count
        if index < base:
            raise ValueError(f"event {index + 1} is stored: it cannot be replaced")
        return History(self.stored, self.tail.set(index - base, event))

    def evolver(self) -> "HistoryBuilder":
        return HistoryBuilder(self)


class HistoryBuilder:
    """A `History` being extended (the checker's scratch: append, len, indexes);
    `persistent()` gives the history it reached."""

    def __init__(self, history: History):
        self._history = history
        self._tail = history.tail.evolver()

    def append(self, event: AnyEvent) -> None:
        self._tail.append(event)

    def __len__(self) -> int:
        return self._history.stored.count + len(self._tail)

    def __getitem__(self, index: int) -> AnyEvent:
        base = self._history.stored.count
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._history.stored.get(index) if index < base else self._tail[index - base]

    def persistent(self) -> History:
        return History(self._history.stored, self._tail.persistent())
