"""Events as an applier's reply carries them, whole (tomc/memory/applier.py): a writer
gets back the events the applier checked (witnesses, times, facts) without replaying the
memory through its own checker. {"type": class name, every field; a fact as a dict, a
tuple as a list}. As a memory stores them (its event hash, an agents' views: `stored`), the
fields that hold their default are left out, and `load` gives them back."""

from __future__ import annotations

import dataclasses
import json

from tomc.dsl.program import (
    AnyEvent,
    Communication,
    Fact,
    Handoff,
    Observation,
    Presence,
    Quiet,
)

TYPES = {cls.__name__: cls for cls in (Presence, Observation, Communication, Handoff, Quiet)}


def dump(event: AnyEvent) -> dict:
    """The event as JSON-ready data."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


def stored(event: AnyEvent) -> str:
    """The event as a memory keeps it: `dump`'s data without the fields (the fact's too)
    that hold their default, as compact JSON (an event is kept once per witness: docs/
    storage.md, "What each event costs")."""
    data = {"type": type(event).__name__, **_set_fields(event)}
    if isinstance(data.get("fact"), Fact):
        data["fact"] = _set_fields(data["fact"])
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _set_fields(value) -> dict:
    """A dataclass's fields that do not hold their default (tuples as lists)."""
    out = {}
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        if f.default is not dataclasses.MISSING and v == f.default:
            continue
        if f.default_factory is not dataclasses.MISSING and v == f.default_factory():
            continue
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def load(data: dict) -> AnyEvent:
    """The event `dump` or `stored` gave (a field left out takes its default)."""
    cls = TYPES[data["type"]]
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "fact":
            value = Fact(**value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)
