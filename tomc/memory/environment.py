"""Where tomc runs, and the one door to what builds what runs there: an `Environment` owns
the database connection (a `Database` handed to it, a FalkorDB URL, or an embedded FalkorDB
it starts on first need and stops when closed), and every checker, engine, live scenario and
session reader is built through it (by tomc/memory/building.py, which only it imports).
Nothing else in tomc connects or constructs them (tests/test_environment.py holds that), so
how a memory is opened (recovery, checkpoints, the agents' views, an agent's own credential)
is written once. Connecting loads no compiler: `tomc memory apply` through an applier is a
thin client (tests/test_startup.py).

    with Environment("redis://localhost:6379") as env:   # or Environment(db), Environment()
        held = env.attach("support", as_agent="Maya")    # Attachment(live, reader, name)
        held = env.run(text, "story.tom")                # a file's scenario, run now
        engine = env.engine("reference", scenario)       # by name: tomc run, report, diff
        held = env.load("support", "export.tom")         # a new memory from a file

Every method raises TomError for bad input (nothing stored), DatabaseUnavailable for a
database it cannot reach; `attach` also AccessDenied and LookupError (no such memory)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Union

from tomc.runtime.connection import Database, connect
from tomc.runtime.errors import TomError

if TYPE_CHECKING:
    from tomc.dsl.checker import LiveChecker
    from tomc.dsl.program import ScenarioModel
    from tomc.engine.live import LiveScenario
    from tomc.memory.building import Attachment
    from tomc.memory.catalog import StoredMemory

# (step, engine) -> None: called after the steps asked for (tomc/engine/factory.py).
Checkpoint = Callable[[int, object], None]


def _building():
    """tomc/memory/building.py, loaded when something is first built (it loads the
    compiler and the checker)."""
    from tomc.memory import building

    return building


class Environment:
    """One database connection and what is built on it. `db`: a Database (used, not
    closed), a FalkorDB URL, or None for `$FALKORDB_URL`, else an embedded FalkorDB in
    `data_dir` (connected when first needed: a reference-engine run never starts one).
    `interactive`: a hung server fails a call in seconds (tomc/runtime/connection.py)."""

    def __init__(self, db: Union[Database, str, None] = None,
                 data_dir: Optional[Path] = None, *, interactive: bool = True):
        if db is not None and not isinstance(db, (Database, str)):
            from tomc.dsl import build
            from tomc.dsl.diagnostics import Diagnostic

            raise TomError([Diagnostic("E143", f"db must be a Database or a URL, got "
                                       f"{type(db).__name__}", None, build.PATH)])
        self._db = db if isinstance(db, Database) else None
        self._url = db if isinstance(db, str) else None
        self._data_dir = data_dir
        self._interactive = interactive
        self._stack = ExitStack()

    @property
    def database(self) -> Database:
        """The connection, made on first use. Raises DatabaseUnavailable."""
        if self._db is None:
            self._db = self._stack.enter_context(
                connect(self._url, self._data_dir, interactive=self._interactive))
        return self._db

    def close(self) -> None:
        """Close what this environment opened (a Database handed to it stays open)."""
        self._stack.close()

    def __enter__(self) -> "Environment":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- checkers, engines

    @staticmethod
    def checker(text: str, origin: str, scenario: Optional[str] = None) -> "LiveChecker":
        """A live checker holding the scenario of .tom `text` (its only one, or the one
        called `scenario`); `origin` names the text in diagnostics. Raises TomError."""
        return _building().checker(text, origin, scenario)

    @staticmethod
    def check_new_memory(name: str, statements, policy: Optional[str] = None) -> None:
        """Raise TomError unless `statements` apply to a new, empty memory `name` under
        `policy` (default `default`): what `tomc memory apply` checks before it creates a
        memory, so that bad input creates nothing. Touches no database."""
        _building().check_new_memory(name, statements, policy)

    def engine(self, name: str, scenario: "ScenarioModel",
               checkpoints: frozenset = frozenset(), checkpoint: Optional[Checkpoint] = None):
        """Engine `name` holding every event of `scenario` (a database engine in fresh
        graphs, replacing its old ones), calling `checkpoint(step, engine)` after the steps
        in `checkpoints`. Raises ValueError (no such engine), DatabaseUnavailable."""
        return _building().built_engine(self, name, scenario, checkpoints, checkpoint)

    def run(self, text: str, origin: str, scenario: Optional[str] = None,
            engine: str = "falkordb") -> "Attachment":
        """The scenario of .tom `text` (its only one, or `scenario`) run now on `engine`,
        live: later events are numbered on from the text (line = line base + revision).
        The caller closes `live.engine`. Raises TomError, ValueError, DatabaseUnavailable."""
        return _building().run(self, text, origin, scenario, engine)

    # ---------------------------------------------------------------- memories

    def attach(self, name: str, policy: Optional[str] = None, as_agent: Optional[str] = None,
               create: bool = True) -> "Attachment":
        """Memory `name` opened as it was left, or created with `policy` (default
        `default`) when there is none (and `create`); its half-applied event undone
        first. `as_agent`: read only that agent's mind (its FalkorDB user made too); with
        the agent's own credential as the connection, from its view of the world. The
        caller closes `live.engine`. Raises TomError (bad name or policy, E144 another
        policy than the memory's), AccessDenied, LookupError, DatabaseUnavailable."""
        return _building().attach(self, name, policy, as_agent, create)

    def create(self, name: str, policy: Optional[str]) -> bool:
        """Create memory `name` with `policy` (default `default`) unless it exists; True if
        this call created it. Raises TomError (a bad policy)."""
        return _building().create(self, name, policy)

    def load(self, name: str, path: Union[str, Path], scenario: Optional[str] = None,
             replace: bool = False) -> "Attachment":
        """A new memory `name` holding the scenario of the .tom file `path` (its only one,
        or `scenario`), live: its policy, agents, rooms and every event, with the times the
        file states (its questions are not kept). The file is checked whole before anything
        is written. The caller closes `live.engine`. Raises TomError (the file's errors;
        E144 a statement a memory does not take; E110 a memory `name` that exists, unless
        `replace`, which drops it first), DatabaseUnavailable."""
        return _building().load(self, name, path, scenario, replace)

    def attached(self, stored: "StoredMemory", serving: Optional[str] = None) -> "LiveScenario":
        """A live scenario on a stored memory: its half-applied event (if a writer died)
        undone, then resumed from its checkpoint (or replayed whole when it has none).
        `serving`: the key its writer looks at with each commit (a session's:
        tomc/memory/submit.py `serving_key`). The caller closes its engine."""
        return _building().attached(self, stored, serving)

    def fill_view(self, name: str, tries: int = 100) -> None:
        """Give memory `name` the agents' view of its world (tomc/memory/agent_view.py) if
        it was made before it: its changes replayed and recorded under WATCH of the
        revision, again if a writer committed meanwhile. An administrator's connection:
        what `tomc token credential` and an attach as an agent run."""
        _building().fill_view(self, name, tries)


def check_new_memory(name: str, statements, policy: Optional[str] = None) -> None:
    """`Environment.check_new_memory` (the API exports it)."""
    Environment.check_new_memory(name, statements, policy)
