"""A memory opened by an agent that holds only its own credential (docs/security.md, "An
agent can hold only its own credential"): what `Session.attach(as_agent=...)` builds when
its connection may not read the world graph.

Its scenario is rebuilt from the agent's view (tomc/memory/agent_view.py), never from the
world graph: the header and the declarations replayed through a checker, then the events
the agent witnessed taken whole (checked once by the writer that committed them; nothing
is compiled or executed here). A belief read starts at the perspective that owns its key,
found from the agent's own mind graph (its `P` nodes' `owns`). Catching up reads the view
again when the revision moved.

    live = viewed(agent_db, "support", "Maya")   # ViewedMemory, caught up
    live.scenario.events                         # the events Maya witnessed
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import redis

from tomc.compiler.templates import render
from tomc.dsl.checker import LiveChecker
from tomc.dsl.diagnostics import DiagnosticError
from tomc.dsl.program import QueryModel, Quiet, ScenarioModel
from tomc.engine.live import DECLARATIONS
from tomc.memory import agent_view, catalog
from tomc.memory.served_reads import ServedReads
from tomc.runtime.connection import Database
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, TomError
from tomc.runtime.keys import memory_key


class ViewedEngine:
    """What a session reads beside the view, through the agent's own user `db`: its mind
    graph's perspectives (which chain owns which key, their node ids), read by the memory's
    applier (`reads`: tomc/memory/served_reads.py, which the session's belief reads use too)."""

    def __init__(self, db: Database, name: str, agent: str):
        self.db = db
        self.reads = ServedReads(db, name, agent)
        self.agent = agent
        self.graphs = catalog.memory_graphs(name, [agent])
        # An agent cannot read the incarnation key: its requests name none.
        self.incarnation: tuple[str, Optional[str]] = (memory_key(name, "incarnation"),
                                                       None)
        self._owned: dict[tuple, set[str]] = {}
        self._ids: dict[tuple, int] = {}
        self._stale = True

    def moved(self) -> None:
        """The view moved on: read the perspectives again before the next belief read."""
        self._stale = True

    def load(self) -> None:
        """Read the agent's perspectives again if the view moved since they were read."""
        if not self._stale:
            return
        try:
            rows = self.reads.read(self.graphs.mind(self.agent),
                                   render("read_perspectives.cypher"), {})
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not read {self.agent}'s mind graph: "
                                      f"{err}") from None
        self._owned = {tuple(r["agents"]): set(r["owns"] or []) for r in rows}
        self._ids = {tuple(r["agents"]): r["id"] for r in rows}
        self._stale = False

    def owner_id(self, query: QueryModel) -> int:
        """The node id of the perspective that stores `query`'s key for its chain (one that
        starts with the agent): the chain itself, or the nearest above it that owns it."""
        self.load()
        chain = tuple(query.chain)
        while len(chain) > 1 and query.key not in self._owned.get(chain, ()):
            chain = chain[:-1]
        return self._ids[chain]

    def served(self, within_s: float) -> Optional[bool]:
        """No look at the appliers comes with its reads: the session asks (None)."""
        return None

    def close(self) -> None:
        """Nothing of its own to release (the session's stack closes `db`)."""


class ViewedMemory:
    """A live scenario's reading half (tomc/engine/live.py `LiveScenario`) over an agent's
    view: `checker` (for questions), `scenario`, `step`, `catch_up`, `engine`. It writes
    nothing itself: a session's writes go through the memory's applier
    (tomc/memory/readers.py `CredentialReader`)."""

    line_base = 0

    def __init__(self, db: Database, name: str, agent: str,
                 checker: Callable[[str, str], LiveChecker]):
        self.name = name
        self.agent = agent
        self._checker = checker  # (header, origin) -> LiveChecker: the Environment's
        self.engine = ViewedEngine(db, name, agent)
        self.revision: Optional[int] = None
        self.checker: Optional[LiveChecker] = None
        self._step = 0
        # How far the view was taken in: its header, revision and step (no events kept).
        self._view: Optional[agent_view.View] = None

    @property
    def scenario(self) -> ScenarioModel:
        return self.checker.scenario

    @property
    def step(self) -> int:
        return self._step

    def catch_up(self) -> None:
        """Take in what the agent's view gained since it was read (its new declarations
        and events only: tomc/memory/agent_view.py `since`); read it whole the first time,
        or when it cannot be caught up (an event of it undone)."""
        graphs = self.engine.graphs
        try:
            if self._view is not None:
                try:
                    gained = agent_view.since(self.engine.db, graphs, self.agent, self._view)
                    if gained is not None:
                        self._take(gained)
                    return
                except agent_view.Reread:
                    pass  # read whole, below
            view = agent_view.read(self.engine.db, graphs, self.agent)
        except redis.exceptions.NoPermissionError as err:
            raise AccessDenied(
                f"this connection may not read {self.agent}'s view of memory {self.name!r} "
                f"({err}): it is another agent's credential, or one issued before this tomc; "
                f"`tomc token credential {self.name} --agent {self.agent}` issues "
                f"{self.agent}'s (and repairs its user) (docs/security.md)") from None
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not read {self.agent}'s view: {err}") from None
        if view is None:
            raise AccessDenied(
                f"memory {self.name!r} has no view for its agents yet (made by an older "
                "tomc): an administrator fills it in with `tomc token credential "
                f"{self.name} --agent {self.agent}` (docs/security.md)")
        try:
            self.checker = self._checker(view.header, f"memory {self.name}")
        except TomError as err:  # pragma: no cover - the writers checked it
            raise DatabaseUnavailable(f"the view of memory {self.name} does not check: "
                                      f"{err.diagnostics[0].message}") from None
        self._view = replace(view, declarations=[], events=[], step=0, revision=0)
        self._take(view)
        if self.agent not in self.checker.scenario.agents:
            raise AccessDenied(f"memory {self.name!r} has no agent {self.agent!r}")

    def _take(self, gained: agent_view.View) -> None:
        """Hold what the view gained after `self._view`: its declarations checked, its
        events taken whole (checked once by the writers that committed them), numbered
        from the step the view had reached."""
        try:
            for text in gained.declarations:
                self.checker.add_text(text, DECLARATIONS, path="<memory>")
        except DiagnosticError as err:  # pragma: no cover - the writers checked them
            raise DatabaseUnavailable(f"the view of memory {self.name} does not check: "
                                      f"{err.diagnostics[0].message}") from None
        self.checker.take(_numbered(gained.events, self._view.step, gained.step))
        self._view = replace(gained, declarations=[], events=[])
        self.revision, self._step = gained.revision, gained.step
        self.engine.moved()

    def apply(self, *args, **kwargs):
        raise AccessDenied(f"{self.agent}'s own credential writes only through the memory's "
                           "applier, and none took the write (`tomc serve`)")

    apply_whole = apply


# The time of a step the agent did not witness, after any time: a question `at T` resolves
# to the agent's last witnessed event at or before T (its mind changed at no other step).
UNSEEN_TIME = "9999-12-31T23:59"


def _numbered(events: list, after: int, step: int) -> list:
    """`events` (witnessed, in step order) with a placeholder for every other step from
    `after` + 1 up to `step`: a `noop` no agent witnessed, so the checker numbers questions
    with the memory's step, and every list a session shows (witnessed events only) leaves
    it out."""
    by_step = {e.step: e for e in events}
    return [by_step.get(n) or Quiet(step=n, kind="noop", text="", line=0, witnesses=(),
                                    time=UNSEEN_TIME)
            for n in range(after + 1, step + 1)]


def viewed(db: Database, name: str, agent: str,
           checker: Callable[[str, str], LiveChecker]) -> ViewedMemory:
    """Memory `name` as `agent` sees it through its own user `db`, caught up; `checker`
    builds its checker from the view's header (tomc/memory/environment.py). Raises
    AccessDenied (no view yet, no such agent, another agent's credential),
    DatabaseUnavailable."""
    live = ViewedMemory(db, name, agent, checker)
    live.catch_up()
    return live
