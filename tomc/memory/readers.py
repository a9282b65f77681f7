"""What a `Session` may read, as an object (tomc/api.py): every mind through the engine
(`EngineReader`), or one agent's own mind (`AgentReader`; `CredentialReader` with the
agent's own credential: docs/storage.md "Private minds"), which refuses the rest with
AccessDenied.
The session asks its reader instead of branching on who it reads as."""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence

import redis

from tomc.analysis import answer as analyses
from tomc.analysis.view import BeliefView
from tomc.answers import Answer
from tomc.dsl.program import AnyEvent, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine.live import LiveScenario
from tomc.memory import agent_view, submit
from tomc.readiness import ReadyAnswer
from tomc.runtime import queries
from tomc.runtime.connection import Database
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable
from tomc.runtime.graph_view import GraphView


class EngineReader:
    """Every mind, through the session's engine (a session that is not an agent's)."""

    agent: Optional[str] = None
    # The agent whose own credential signs this session's writes to the applier (None:
    # the administrator's connection).
    submits_as: Optional[str] = None
    # Belief and readiness reads may check the revision in their own round trip
    # (engine.answer_if_current): the engine's reads are the session's.
    direct = True

    def __init__(self, live: LiveScenario):
        self.live = live

    def scenario(self, history: Callable[[], list[AnyEvent]]) -> ScenarioModel:
        return self.live.scenario

    def events(self, events: list[AnyEvent]) -> list[AnyEvent]:
        return events

    def writable(self) -> None:
        """Writing is allowed."""

    def chain(self, chain: Sequence[str]) -> None:
        """Every chain may be read."""

    def whole(self, what: str) -> None:
        """The whole memory may be read (`what`: export, a view of every mind)."""

    def belief(self, query: QueryModel) -> Answer:
        return self.live.engine.answer(query)

    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        return self.live.engine.ready(query)

    def analysis(self, query, step: int):
        return analyses.answer(self.view(step), query)

    def view(self, step: int) -> BeliefView:
        return self.live.engine.view(step)

    def mind_view(self, scenario: ScenarioModel, step: int) -> BeliefView:
        return self.view(step)


class AgentReader(EngineReader):
    """One agent's mind, read through `db` (the administrator's connection, or a replica of
    it: a session attached `as_agent`): chains that start with `agent`, the events it
    witnessed, and its own `context_for`; anything else, and writing, raises AccessDenied.
    Its graph reads go to `reads` (`db`, or what a subclass puts there), each one of
    tomc's read templates on the agent's mind graph."""

    direct = False

    def __init__(self, live: LiveScenario, agent: str, db: Database):
        super().__init__(live)
        self.agent = agent
        self.db = db
        self.reads = db

    def scenario(self, history: Callable[[], list[AnyEvent]]) -> ScenarioModel:
        return dataclasses.replace(self.live.scenario, events=history())

    def events(self, events: list[AnyEvent]) -> list[AnyEvent]:
        """The events the agent perceived, as it perceived them (its view holds the same)."""
        seen = (agent_view.perceived(e, self.agent) for e in events)
        return [e for e in seen if e is not None]

    def writable(self) -> None:
        raise AccessDenied(f"this session reads as {self.agent}: it cannot write "
                           "(attach without as_agent to record events)")

    def chain(self, chain: Sequence[str]) -> None:
        if not chain or chain[0] != self.agent:
            asked = " > ".join(chain) or "the truth"
            raise AccessDenied(f"this session reads as {self.agent}: it cannot read "
                               f"{asked}'s beliefs, only chains that start with "
                               f"{self.agent}")

    def whole(self, what: str) -> None:
        raise AccessDenied(f"this session reads as {self.agent}: {what}")

    def belief(self, query: QueryModel) -> Answer:
        self.chain(query.chain)
        engine = self.live.engine
        return queries.answer(self.reads, engine.graphs, query, engine.owner_id(query))

    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        self.chain(query.chain)
        return queries.ready(self.reads, self.live.engine.graphs, query)

    def analysis(self, query, step: int):
        own = (query.analysis == "context_for" and query.agents[0] == self.agent) or \
            (query.analysis in ("open_tasks", "about") and query.chain[:1] == (self.agent,))
        if own:
            scenario = self.scenario(lambda: self.events(list(self.live.scenario.events)))
            return analyses.answer(self.mind_view(scenario, step), query)  # its mind only
        raise AccessDenied(f"this session reads as {self.agent}: only its own beliefs "
                           "(believes / ask AGENT believes ...), its context_for, open tasks, "
                           "about and search are answered")

    def view(self, step: int) -> BeliefView:
        self.whole("no view of every mind")

    def mind_view(self, scenario: ScenarioModel, step: int) -> BeliefView:
        """The view reads only chains that start with the agent (`chain`, through the
        analysis), on its mind graph."""
        return GraphView(self.reads, self.live.engine.graphs, scenario, step)


class CredentialReader(AgentReader):
    """An agent's mind read with only its own credential (`db`, tomc/memory/agent_live.py):
    as `AgentReader`, its graph reads run by the memory's applier (its user may run no
    query: tomc/memory/served_reads.py), and its own speech is written through the
    applier too, signed with its password (tomc/memory/submit.py), which takes only a
    `tell`/`says` (...) by the agent."""

    def __init__(self, live, agent: str, db: Database, memory: str):
        super().__init__(live, agent, db)
        self.reads = live.engine.reads  # its mind graph, read by the applier
        self.submits_as = agent
        self.memory = memory

    def writable(self) -> None:
        try:
            served = submit.serving(self.db.redis, self.memory if self.db.clustered else None)
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not ask whether the memory's applier runs: "
                                      f"{err}") from None
        if not served:
            raise AccessDenied(f"{self.agent}'s own credential writes only through the "
                               "memory's applier, and no `tomc serve` runs on this server "
                               "(docs/security.md)")
