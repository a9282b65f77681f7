"""The one place engines are built by name (`tomc run --engine`, `Session.open(engine=)`,
`tomc report`, `tomc diff`): callers ask what an engine needs (`stored`: a database) and
build it here, with no `if engine == ...` of their own."""

from __future__ import annotations

from typing import Callable, Optional

from tomc.dsl.program import ScenarioModel
from tomc.engine.base import EngineName
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.reference import ReferenceEngine
from tomc.runtime.connection import Database

# (step, engine) -> None: called after the steps asked for, with the state at that step.
Checkpoint = Callable[[int, object], None]

# name -> (the engine's class, whether it keeps the scenario on a database)
ENGINES = {"falkordb": (FalkorEngine, True), "reference": (ReferenceEngine, False)}


def stored(engine: str) -> bool:
    """Whether engine `engine` keeps its scenario on a database (needs `db`). Raises
    ValueError for an unknown name."""
    return _kind(engine)[1]


def build(engine: EngineName, scenario: ScenarioModel, db: Optional[Database] = None,
          checkpoints: frozenset = frozenset(), checkpoint: Optional[Checkpoint] = None):
    """Engine `engine` holding every event of `scenario` (on a database engine, in fresh
    graphs replacing its old ones), calling `checkpoint(step, engine)` after the steps in
    `checkpoints` (0: before any event). Raises ValueError (an unknown engine, or no `db`
    for a stored one), DatabaseUnavailable."""
    cls, needs_db = _kind(engine)
    if needs_db and db is None:
        raise ValueError(f"the {engine} engine needs a database")
    return cls.build(db, scenario, checkpoints, checkpoint)


def _kind(engine: str) -> tuple[type, bool]:
    try:
        return ENGINES[engine]
    except (KeyError, TypeError):
        raise ValueError(f"unknown engine {engine!r}: use "
                         f"{' or '.join(ENGINES)}") from None
