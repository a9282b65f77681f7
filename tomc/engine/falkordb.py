"""The FalkorDB engine: a scenario's beliefs in its graphs, written by compiled Cypher.

It wires the pipeline's lower half in one place: the compiler (tomc/compiler/lower.py, which
follows the scenario event by event), the reads some events need first
(tomc/compiler/reads.py), and the runtime that sends statements (tomc/runtime/). Two ways
to write:

- `FalkorEngine.build`: a whole scenario at once (`tomc run`), under staging names swapped
  in at the end, statements pipelined (one round trip for many events);
- `apply` / `declare`: one change at a time on live graphs, each its own transaction on the
  scenario's revision (tomc/runtime/transactions.py). If another writer committed first,
  `Behind` is raised and nothing was written: the caller catches up (tomc/engine/live.py).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Sequence

import redis
from pyrsistent import PVector, pvector

from tomc.analysis.handoff import handed_over
from tomc.answers import Answer
from tomc.compiler.lower import WORLD_INDEXES, Compiler
from tomc.compiler.perspectives import Perspectives
from tomc.compiler.plan import WORLD, EventPlan, GraphNames, Statement, graph_names
from tomc.compiler.reads import Bindings, reads_for
from tomc.compiler.resolve import Held
from tomc.compiler.templates import render
from tomc.dsl.program import AnyEvent, QueryModel, ReadyQuery, ScenarioModel
from tomc.engine.base import Behind
from tomc.engine import recovery
from tomc.engine.history import History
from tomc.engine.journal import Journal
from tomc.engine.reference import ReferenceEngine
from tomc.readiness import ReadyAnswer
from tomc.runtime import forks
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable, Replaced
from tomc.runtime.executor import Directory, Executor, RunStats, Staging, reply_rows
from tomc.runtime.graph_view import GraphView
from tomc.runtime.queries import (
    answer_from_rows,
    belief_cypher,
    belief_read,
    ready,
    ready_from_rows,
    ready_read,
)
from tomc.runtime.transactions import Writer

# A run sends its statements in batches of at most this many (one round trip each).
BATCH = 200

Checkpoint = Callable[[int, "FalkorEngine"], None]


class FalkorEngine:
    """One scenario on FalkorDB (an Engine: tomc/engine/base.py).

    `graphs` are its graph names; `revision` the revision its state is at (every committed
    event or declaration is one); `stats` the run's timing.
    """

    def __init__(self, db: Database, scenario: ScenarioModel, graphs: GraphNames,
                 compiler: Optional[Compiler] = None, revision: int = 0,
                 journal: Optional[Journal] = None):
        self.db = db
        # What a commit keeps beside the graphs (a memory's views, event hash, checkpoint).
        self.journal = journal or Journal()
        # Lists of its own: the engine is told of each change (tomc/engine/base.py).
        # Its events immutable (a memory's attached from a checkpoint are read when asked:
        # tomc/engine/history.py), never copied whole.
        events = scenario.events if isinstance(scenario.events, (History, PVector)) \
            else pvector(scenario.events)
        self.scenario = dataclasses.replace(scenario, agents=list(scenario.agents),
                                            rooms=list(scenario.rooms), events=events)
        self.graphs = graphs
        self.compiler = compiler or Compiler(self.scenario)
        self.executor = Executor(db, Directory())
        self.revision = revision
        self.writer: Optional[Writer] = None
        # A memory's (incarnation key, id): the writer refuses a memory created again.
        self.incarnation: Optional[tuple[str, Optional[str]]] = None
        # A session's memory: the key that says appliers serve it, looked at with each
        # commit (`served`).
        self.serving: Optional[str] = None
        self._step = len(scenario.events)
        # The compiler's state is not the graphs' (caught up, or a failed group, or an
        # engine that starts at a checkpoint's revision): reload it before compiling
        # (`_loaded`).
        self._stale = revision > 0 and compiler is None
        # Whether the world graph is known to have its indexes (`_indexed`).
        self._indexed_world = False

    @property
    def stats(self) -> RunStats:
        return self.executor.stats

    @property
    def step(self) -> int:
        return self._step

    # ---------------------------------------------------------------- a whole scenario

    @classmethod
    def build(cls, db: Database, scenario: ScenarioModel, checkpoints: set[int] = frozenset(),
              checkpoint: Optional[Checkpoint] = None) -> "FalkorEngine":
        """Run every event of `scenario` into fresh graphs that replace its old ones; calls
        `checkpoint(step, engine)` after the steps in `checkpoints` (0: after the setup),
        with the engine's state at that step. Raises DatabaseUnavailable."""
        if db.cluster is not None:
            # A scenario's graphs (`tom:NAME:...`) are not under one hash tag: in a cluster
            # they hash to several shards, where its transactions would fail (CROSSSLOT).
            raise DatabaseUnavailable(
                f"{db.url} is a cluster, which keeps memories only (tomc memory, "
                "Session.attach, tomc mcp); run scenarios on one server or the embedded "
                "FalkorDB (docs/deployment.md)")
        staging = Staging(db, graph_names(scenario.name, scenario.agents))
        events = list(scenario.events)
        engine = cls(db, scenario, staging.graphs)
        engine._step = 0
        started = time.perf_counter()
        try:
            staging.drop_abandoned()
            forks.drop_abandoned(db)
            engine.executor.execute(engine.graphs, engine.compiler.setup())
            if 0 in checkpoints and checkpoint:
                checkpoint(0, engine)
            pending: list[Statement] = []
            for event in events:
                reads = reads_for(event, scenario.policy)
                if reads:
                    engine._flush(pending)
                plan = engine.compiler.event(event, engine._bindings(reads, event))
                engine.compiler.accept(plan)
                pending += plan.statements
                engine._step = event.step
                if event.step in checkpoints or len(pending) >= BATCH:
                    engine._flush(pending)
                if event.step in checkpoints and checkpoint:
                    checkpoint(event.step, engine)
            engine._flush(pending)
            staging.swap(len(events))
        except BaseException:
            staging.drop_mine()
            raise
        for agent in scenario.agents:
            engine.executor.directory.rename(engine.graphs.mind(agent),
                                             staging.final.mind(agent))
        engine.graphs = staging.final
        engine.revision = len(events)
        engine.stats.total_seconds = time.perf_counter() - started
        return engine

    def drop(self) -> None:
        """Delete the scenario's graphs and its revision key (a run whose answers are read
        and whose graphs nobody will look at: `tomc run`, `tomc test`). Raises
        DatabaseUnavailable."""
        try:
            self.db.redis.delete(self.graphs.world, *self.graphs.minds.values(),
                                 self.graphs.revision_key)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            raise DatabaseUnavailable(f"lost the FalkorDB connection: {err}") from None

    def _flush(self, pending: list[Statement]) -> None:
        self.executor.execute(self.graphs, pending)
        pending.clear()

    def _bindings(self, reads, event: AnyEvent, writer: Optional[Writer] = None) -> Bindings:
        """Read what `event` needs before it is compiled (tomc/compiler/reads.py)."""
        bindings = Bindings()
        for read in reads:
            if read.statement is None:  # handed: what `ask handoff` includes, right now
                view = GraphView(self.db, self.graphs, self.scenario, event.step - 1)
                policy = self.scenario.policy
                bindings.handed = [
                    h.to_row(policy.is_many(h.key))
                    for h in handed_over(view, event.speaker, event.listener,
                                         self.compiler.standings.judged(event).authority)]
                continue
            if writer is not None:
                (reply,) = writer.read([query_command(self.graphs.graph(WORLD),
                                                      read.statement.cypher,
                                                      read.statement.params, read_only=True)])
                rows = reply_rows(reply)
            else:
                rows = self.executor.read(self.graphs, read.statement)
            if read.name == "believers":
                bindings.believers = rows[0]["believers"] if rows else []
            else:
                bindings.revealed = rows
        return bindings

    # ---------------------------------------------------------------- one change at a time

    def attach_writer(self) -> Writer:
        """The connection this engine commits on (made on first use)."""
        if self.writer is None:
            self.writer = Writer(self.db, self.graphs.revision_key, self.incarnation,
                                 self.serving)
        return self.writer

    def served(self, within_s: float) -> Optional[bool]:
        """Whether appliers served the memory at this engine's last look (a commit, a
        catch-up, a read of the current state), if it was within the last `within_s`
        seconds; None when there was none."""
        look = self.writer.served if self.writer is not None else None
        if look is None or time.monotonic() - look[0] > within_s:
            return None
        return look[1]

    def take_turn(self) -> None:
        """Ask for the memory's turn: the next commit goes before other writers'
        (tomc/runtime/transactions.py)."""
        self.attach_writer().take_turn()

    def end_turn(self) -> None:
        """Give back the turn if this engine holds it and will not commit now."""
        if self.writer is not None:
            self.writer.end_turn()

    def apply(self, events: Sequence[AnyEvent], extra: Sequence[tuple] = ()) -> None:
        """Commit `events`, each in its own transaction (`extra` commands join the last
        one's: its idempotency record). Raises Behind (nothing written for that event: the
        ones before it are committed), DatabaseUnavailable."""
        for i, event in enumerate(events):
            self._commit_event(event, extra if i == len(events) - 1 else ())

    def _commit_event(self, event: AnyEvent, extra: Sequence[tuple]) -> None:
        writer = self.attach_writer()
        self._current(writer)
        with self._gaining([event]):
            bindings = self._bindings(reads_for(event, self.scenario.policy), event, writer)
            plan = self.compiler.event(event, bindings, self.revision + 1)
            self._commit(writer, plan.statements, [plan], extra, [event])
        self.compiler.accept(plan)
        self._step = event.step

    @contextmanager
    def _gaining(self, events: Sequence[AnyEvent], agents: Sequence[str] = (),
                 rooms: Sequence[str] = ()):
        """The scenario gains `events`, `agents` and `rooms` for the block (the compiler
        plans with them), and keeps them only if it ends without an error."""
        before = self.scenario.events
        lengths = (len(self.scenario.agents), len(self.scenario.rooms))
        self.scenario.events = before.extend(events)
        self.scenario.agents.extend(agents)
        self.scenario.rooms.extend(rooms)
        try:
            yield
        except BaseException:
            self.scenario.events = before
            del self.scenario.agents[lengths[0]:]
            del self.scenario.rooms[lengths[1]:]
            raise

    @staticmethod
    def groupable(event: AnyEvent, policy) -> bool:
        """Whether `event` can share a transaction with the events before it: it reads
        nothing before it is compiled (a read would not see their uncommitted writes)."""
        return not reads_for(event, policy)

    def apply_together(self, changes: Sequence, extra: Sequence[tuple] = ()) -> None:
        """Commit `changes` (events, each `groupable`, and clock lines as .tom text) as
        revision + 1, + 2, ... in ONE transaction with `extra` (group commit:
        tomc/memory/applier.py): every event keeps its own step, and a reader sees all of
        them or none. Raises Behind (nothing written), DatabaseUnavailable (a statement
        that failed at run time: the whole group is undone)."""
        writer = self.attach_writer()
        self._current(writer)
        self._stale = True  # until committed, the compiler is ahead of the graphs
        statements, plans = [], []
        with self._gaining([c for c in changes if not isinstance(c, str)]):
            for i, change in enumerate(changes):
                rev = self.revision + 1 + i
                if isinstance(change, str):  # a clock line: no agents, no rooms
                    statements += self.compiler.declare([], [], rev, change, (0, change))
                    continue
                plan = self.compiler.event(change, None, rev)
                self.compiler.accept(plan)
                plans.append(plan)
                statements += plan.statements
            self._commit(writer, statements, plans, extra, list(changes))
        self._stale = False
        self._step = max([p.step for p in plans], default=self._step)

    def declare(self, agents: list[str], rooms: list[str], text: str, line: int = 0,
                extra: Sequence[tuple] = ()) -> None:
        """Commit a declaration the scenario has just gained: nodes for the agents and rooms,
        a mind graph for each new agent, a perspective for each new chain."""
        writer = self.attach_writer()
        self._current(writer)
        # Declaring records the new chains in the compiler before the commit: if the commit
        # fails, put it all back, so a retry plans the new mind graphs again.
        before = (self.graphs, copy.deepcopy(self.compiler.perspectives))
        self.graphs = self.graphs.with_agents([a for a in agents if a not in self.graphs.minds])
        try:
            with self._gaining((), agents, rooms):
                statements = self.compiler.declare(agents, rooms, self.revision + 1, text,
                                                   (line, text))
                self._commit(writer, statements, [], extra, [text])
        except BaseException:
            self.graphs, self.compiler.perspectives = before
            raise
        self.executor.learn_perspectives(self.graphs, self.scenario.agents)

    def _current(self, writer: Writer) -> None:
        # Loading state from the graphs needs a fresh look first (the memory may have been
        # dropped: Replaced), not the revision remembered from the last commit.
        revision = writer.rewatch() if self._stale else writer.begin()
        if revision != self.revision:
            raise Behind(revision)
        self._loaded()

    def _loaded(self) -> None:
        """The compiler's state and perspective ids loaded from the graphs, if catching up
        left them behind: only a writer that compiles pays for it (a session whose writes
        go to an applier never does)."""
        if self._stale:
            try:
                self.load_perspectives()
            except DatabaseUnavailable:
                # A mind graph missing because the memory was dropped (and perhaps created
                # again) is Replaced (E145), not FalkorDB's "empty key" error.
                self._check_incarnation()
                raise
            self._stale = False

    def _check_incarnation(self) -> None:
        """Raise Replaced if the memory's incarnation is no longer the one this engine
        attached to (nothing to check for a run's engine or a memory made before them)."""
        if self.incarnation is None or self.incarnation[1] is None:
            return
        now = self.db.redis.get(self.incarnation[0])
        if now != self.incarnation[1]:
            raise Replaced(f"the memory was dropped or created again since this session "
                           f"attached (incarnation {self.incarnation[1]}, now {now}): "
                           "attach again")

    def _commit(self, writer: Writer, statements: list[Statement], plans: list[EventPlan],
                extra: Sequence[tuple], changes: Sequence) -> None:
        """Commit `statements` (of the events `plans`, or of a declaration when there are
        none) with `extra` and the agents' views of `changes` (the events, or declarations
        as .tom text: tomc/memory/agent_view.py), one revision each."""
        started = time.perf_counter()
        view = self.journal.recorded(self.graphs, changes, self.revision)
        replies = writer.commit([self.executor.command(self.graphs, s) for s in statements],
                                len(changes), [*extra, *view])
        if replies is None:
            raise Behind(writer.begin())
        changes = len(changes)
        failed = next(((s, r) for s, r in zip(statements, replies) if isinstance(r, Exception)),
                      None)
        self.revision += changes
        if failed is not None:
            statement, reply = failed
            # What the transaction recorded beside the change (its idempotency records)
            # goes with it: a retry applies it again, never answered from a failed one.
            unrecorded = [("HDEL", c[1], *c[2::2]) for c in extra if c[0] == "HSET"]
            undone = bool(plans) and recovery.undo_events(
                self.db, self.graphs, [p.step for p in plans], self.revision, self.journal,
                unrecorded)
            # If another writer committed first, the event stays half-applied: the next
            # writer to attach undoes it if it is still the latest (docs/storage.md). This
            # session then replays it like any other writer's (its checker took it back).
            if not undone:
                self.revision -= changes
            # The checkpoint its transaction may have written holds the failed change.
            self.journal.failed(self.db, self.graphs)
            self._stale = True
            outcome = "the change was undone" if undone else "the change is not undone"
            raise DatabaseUnavailable(f"FalkorDB failed {statement.template}: "
                                      f"{str(reply).splitlines()[0]}; {outcome}",
                                      statement.origin)
        self.stats.event_seconds.append(time.perf_counter() - started)
        self.stats.statements += len(statements)
        self.stats.round_trips += 1

    # ---------------------------------------------------------------- questions

    def answer(self, query: QueryModel) -> Answer:
        graph, cypher, params = self._belief(query)
        return answer_from_rows(query, self.db.read(graph, cypher, params))

    def _belief(self, query: QueryModel, current: bool = False) -> tuple[str, str, dict]:
        """(graph, Cypher, parameters) of `query`'s belief read (`current`: see
        queries.belief_cypher). It starts from the owner's node id when the engine knows
        it; after other writers committed (`_stale`) the owner is found inside the query
        instead: loading which chain owns which key reads every mind graph, and a question
        needs one chain (a writer loads it before it compiles, `_loaded`)."""
        by_chain = self._stale
        owner = None if by_chain else self.owner_id(query)
        graph, template, params = belief_read(self.graphs, query, owner)
        return graph, belief_cypher(template, current, by_chain), params

    def owner_id(self, query: QueryModel) -> int:
        """The node id of the perspective that stores `query`'s key for its chain (the
        truth's, in the world graph): a belief read starts there (tomc/runtime/queries.py).
        Loads the state from the graphs first if catching up left it behind."""
        self._loaded()
        ids = self.executor.directory.ids
        if not query.chain:
            if self.graphs.world not in ids:  # a run's engine reads it once; a writer that
                read = Statement(WORLD, "read_perspectives.cypher",  # attaches learns it
                                 render("read_perspectives.cypher"), {}, (0, "the truth"))
                self.executor.directory.learn(self.graphs.world,
                                              self.executor.read(self.graphs, read))
            return ids[self.graphs.world][()]
        owner = self.compiler.perspectives.owner(query.chain, query.key)
        return ids[self.graphs.mind(owner[0])][owner]

    def answer_all(self, queries: Sequence[QueryModel]) -> list[Answer]:
        """`answer` of each query, their reads pipelined in one round trip."""
        commands = []
        for query in queries:
            commands.append(query_command(*self._belief(query), read_only=True))
        replies = self.executor.read_all(commands, [(q.line, q.text) for q in queries])
        return [answer_from_rows(q, reply_rows(r)) for q, r in zip(queries, replies)]

    def answer_if_current(self, query: QueryModel) -> Optional[Answer]:
        """The belief read, sent with a fresh WATCH and GET of the revision on the writer's
        connection (one round trip); None if another writer committed since `revision`."""
        # Answered only if the revision is still this engine's: the graph then holds
        # nothing after its step, and a read of that step needs only open versions.
        rows = self._rows_if_current(self._belief(query, current=query.step >= self._step))
        return None if rows is None else answer_from_rows(query, rows)

    def ready(self, query: ReadyQuery) -> ReadyAnswer:
        return ready(self.db, self.graphs, query)

    def ready_if_current(self, query: ReadyQuery) -> Optional[ReadyAnswer]:
        """Like `answer_if_current`: the read and the revision check in one round trip."""
        graph, template, params = ready_read(self.graphs, query)
        rows = self._rows_if_current((graph, render(template), params))
        return None if rows is None else ready_from_rows(query, rows)

    def _rows_if_current(self, read: tuple[str, str, dict]) -> Optional[list[dict]]:
        """The rows of a (graph, Cypher, parameters) read sent with the revision check on
        the writer's connection; None if another writer committed since `revision`."""
        graph, cypher, params = read
        revision, (reply,) = self.attach_writer().read_current(
            [query_command(graph, cypher, params, read_only=True)])
        return reply_rows(reply) if revision == self.revision else None

    def view(self, step: int) -> GraphView:
        """The beliefs as of `step`; a view of the latest step can also simulate."""
        return GraphView(self.db, self.graphs, self.scenario, step,
                         self.simulate if step == self._step else None, indexes=True)

    @contextmanager
    def simulate(self, events: Sequence[AnyEvent]) -> Iterator[GraphView]:
        """Fork the graphs `events` can write (GRAPH.COPY), run the events' statements on
        the forks (compiled against a copy of the compiler's state), and yield a view of
        them; the forks are dropped after. Where a copy could leave a replica unable to
        restart (tomc/runtime/forks.py `replays`), nothing is copied: the scenario and the
        imagined events are replayed by the reference interpreter, whose answers the
        engine's equal (tests/test_properties.py), and its view is yielded."""
        if forks.replays(self.db):
            with ReferenceEngine.build(None, self.scenario).simulate(events) as replayed:
                yield replayed
            return
        self._loaded()
        written = forks.written_minds(events, self.graphs.agents)
        # The imagined events count as said (`trust learned` standings replay the events).
        imagined = dataclasses.replace(self.scenario, events=self.scenario.events.extend(events))
        with forks.fork(self.db, self.graphs, written, self.executor.directory) as forked:
            shadow = FalkorEngine(self.db, imagined, forked,
                                  Compiler(imagined,
                                           copy.deepcopy(self.compiler.perspectives),
                                           copy.deepcopy(self.compiler.held)))
            shadow.executor.directory = self.executor.directory
            for n, event in enumerate(events, 1):
                reads = reads_for(event, self.scenario.policy)
                # Version ids come from the revision: past the stored ones, never theirs.
                plan = shadow.compiler.event(event, shadow._bindings(reads, event),
                                             self.revision + n)
                shadow.compiler.accept(plan)
                shadow.executor.execute(forked, plan.statements)
            yield GraphView(self.db, forked, imagined, events[-1].step, indexes=True)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # ---------------------------------------------------------------- catching up

    def changes_since(self, revision: int) -> tuple[int, list[tuple[int, str]]]:
        """(the revision they reach, the statements committed after `revision` in order:
        read_applied.cypher), an event or a declaration each as (revision, canonical .tom
        text). Watches the revision first, so a change committed while the caller replays
        these makes its next commit fail."""
        writer = self.attach_writer()
        watched = writer.rewatch()
        if watched < self.revision:
            raise DatabaseUnavailable(f"the scenario was dropped or replaced since this session "
                                      f"attached (its revision went back from {self.revision} "
                                      f"to {watched}): attach again")
        if watched <= revision:  # nothing new: one round trip, no read
            return max(watched, revision), []
        rows = self.executor.read(self.graphs, Statement(
            WORLD, "read_applied.cypher", render("read_applied.cypher"), {"rev": revision},
            (0, "catching up")))
        changes = sorted((r["rev"], r["text"]) for r in rows)
        return max([watched, revision] + [rev for rev, _ in changes]), changes

    def follow(self, agents: list[str], rooms: list[str], events: Sequence[AnyEvent]) -> None:
        """Another writer committed `agents` (their mind graphs exist), `rooms` and
        `events`: the scenario gains them (`reload` then loads the compiler's state)."""
        self.graphs = self.graphs.with_agents([a for a in agents if a not in self.graphs.minds])
        self.scenario.agents.extend(agents)
        self.scenario.rooms.extend(rooms)
        self.scenario.events = self.scenario.events.extend(events)

    def reload(self, revision: int) -> None:
        """After `changes_since` was replayed up to `revision`: that revision, and the
        compiler's state and perspective ids from the graphs."""
        self._step = len(self.scenario.events)
        if revision != self.revision:  # else keep what is loaded
            self.revision = revision
            self._stale = True  # loaded when next needed (`_loaded`)

    # ---------------------------------------------------------------- state from the graphs

    def _indexed(self) -> None:
        """A memory stored before one of the world graph's indexes (lower.WORLD_INDEXES)
        gets it, and one `Heard` node per first hearing (told.cypher) before the index of
        hearings, which says the upgrade is done; once per engine, one read when there is
        nothing to do. Two writers attaching at once may both upgrade (MERGE: the second
        adds nothing) and both make an index (the second finds it made)."""
        check = Statement(WORLD, "read_range_indexes.cypher",
                          render("read_range_indexes.cypher"), {}, (0, "upgrading"))
        made = {row["label"] for row in self.executor.read(self.graphs, check)
                if row["properties"]}
        if "Heard" not in made:  # first, so a writer cut off before the index runs it again
            self.executor.execute(self.graphs, [Statement(
                WORLD, "upgrade_heard.cypher", render("upgrade_heard.cypher"), {},
                (0, "upgrading"))])
        for label, template in WORLD_INDEXES.items():
            if label not in made:
                try:
                    self.executor.execute(self.graphs, [Statement(
                        WORLD, template, render(template), {}, (0, "upgrading"))])
                except DatabaseUnavailable as err:
                    if "already indexed" not in str(err):
                        raise
        self._indexed_world = True

    def load_perspectives(self) -> None:
        """Rebuild the compiler's knowledge of which chain owns which key and of the open
        versions, and the directory of perspective ids, from the graphs (a writer that
        attaches or catches up)."""
        found = self.executor.learn_perspectives(self.graphs, self.scenario.agents)
        if any(row["vid"] is None for row in found[None]):  # stored by an older tomc
            upgrade = Statement(WORLD, "upgrade_versions.cypher",
                                render("upgrade_versions.cypher"), {}, (0, "upgrading"))
            self.executor.execute(self.graphs, [upgrade, *(
                Statement(agent, upgrade.template, upgrade.cypher, {}, upgrade.origin)
                for agent in self.scenario.agents)])
            found = self.executor.learn_perspectives(self.graphs, self.scenario.agents)
        if not self._indexed_world and self.journal.memory:
            self._indexed()  # a memory's world graph only (a file's goes without)
        held = Held()
        held.load(found.pop(None))
        perspectives = Perspectives(self.scenario.chains())
        for agent, (rows, keys) in found.items():
            perspectives.keys[agent] = set(keys)
            for row in rows:
                chain = tuple(row["agents"])
                if chain in perspectives.owned:
                    perspectives.own(chain, row["owns"] or [])
        self.compiler = Compiler(self.scenario, perspectives, held)

