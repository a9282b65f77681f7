"""Events as an applier's reply carries them, whole (tomc/memory/applier.py): a writer
gets back the events the applier checked (witnesses, times, facts) without replaying the
memory through its own checker. {"type": class name, every field; a fact as a dict, a
tuple as a list}."""

from __future__ import annotations

import dataclasses

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


def load(data: dict) -> AnyEvent:
    """The event `dump` gave."""
    cls = TYPES[data["type"]]
    values = {}
    for f in dataclasses.fields(cls):
        value = data[f.name]
        if f.name == "fact":
            value = Fact(**value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)
