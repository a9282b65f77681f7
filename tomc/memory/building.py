"""How what runs is built (tomc/memory/environment.py is the door: nothing else calls
these): checkers, engines, live scenarios and session readers, and so how a memory is
attached, created and loaded. Each function takes the `Environment` whose database it uses
(`env.database`). Imported only when something is built: `tomc memory apply` through an
applier connects through the Environment without loading the compiler."""

from __future__ import annotations

import logging
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Union

import redis

from tomc.dsl import ast
from tomc.dsl.checker import LiveChecker, check_text
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_statement
from tomc.dsl.parser import parse, read_source
from tomc.dsl.policies import load_policy
from tomc.dsl.program import ScenarioModel
from tomc.engine import factory as engines
from tomc.engine import recovery
from tomc.engine.base import EngineName
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.live import CHANGES, QUESTIONS, LiveScenario
from tomc.memory import acl, agent_live, agent_view, catalog, checkpoint, submit
from tomc.memory.journal import MemoryJournal
from tomc.memory.opening import (
    Statements,
    header_for,
    name_text,
    refuse,
    refused_hint,
    same_policy,
    statements_of,
)
from tomc.memory.readers import AgentReader, CredentialReader, EngineReader
from tomc.rules import shipped_names
from tomc.runtime.connection import Database
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, TomError
from tomc.runtime.keys import memory_key

logger = logging.getLogger(__name__)

# (step, engine) -> None: called after the steps asked for (tomc/engine/factory.py).
Checkpoint = Callable[[int, object], None]


class Attachment(NamedTuple):
    """A scenario as one session holds it: `live` (a LiveScenario, or an agent's view of
    the world: tomc/memory/agent_live.py), `reader` (what the session may read), `name`
    (the memory's; None for a scenario run from a file)."""

    live: object
    reader: EngineReader
    name: Optional[str]


def checker(text: str, origin: str, scenario: Optional[str] = None) -> LiveChecker:
    """A live checker holding the scenario of .tom `text` (its only one, or the one called
    `scenario`); `origin` names the text in diagnostics. Raises TomError."""
    try:
        return LiveChecker(text, origin, scenario)
    except DiagnosticError as err:
        raise TomError(err.diagnostics, text) from None


def check_new_memory(name: str, statements: Statements, policy: Optional[str] = None) -> None:
    """Raise TomError unless `statements` apply to a new, empty memory `name` under
    `policy` (default `default`): what `tomc memory apply` checks before it creates a
    memory, so that bad input creates nothing. Touches no database."""
    held = checker(header_for(name_text(name), policy or "default", inline=True),
                   f"memory {name}")
    text, parsed = statements_of(statements)
    refuse(parsed, text, in_memory=True)
    try:
        held.add(parsed, CHANGES, text, "<apply>")
    except DiagnosticError as err:
        raise TomError(err.diagnostics, text) from None


def built_engine(env, name: EngineName, scenario: ScenarioModel,
                 checkpoints: frozenset = frozenset(),
                 checkpoint: Optional[Checkpoint] = None):
    """Engine `name` holding every event of `scenario` (a database engine in fresh
    graphs, replacing its old ones), calling `checkpoint(step, engine)` after the steps
    in `checkpoints`. Raises ValueError (no such engine), DatabaseUnavailable."""
    db = env.database if engines.stored(name) else None
    return engines.build(name, scenario, db, checkpoints, checkpoint)


def run(env, text: str, origin: str, scenario: Optional[str] = None,
        engine: EngineName = "falkordb") -> Attachment:
    """The scenario of .tom `text` (its only one, or `scenario`) run now on `engine`,
    live: later events are numbered on from the text (line = line base + revision).
    The caller closes `live.engine`. Raises TomError, ValueError, DatabaseUnavailable."""
    engines.stored(engine)  # ValueError: no such engine, before anything is built
    held = checker(text, origin, scenario)
    model = held.scenario
    line_base = text.count("\n") + 1 - len(model.events)
    live = LiveScenario(held, built_engine(env, engine, model), line_base)
    return Attachment(live, EngineReader(live), None)


def attach(env, name: str, policy: Optional[str] = None, as_agent: Optional[str] = None,
           create: bool = True) -> Attachment:
    """Memory `name` opened as it was left, or created with `policy` (default
    `default`) when there is none (and `create`); its half-applied event undone
    first. `as_agent`: read only that agent's mind (its FalkorDB user made too); with
    the agent's own credential as the connection, from its view of the world. The
    caller closes `live.engine`. Raises TomError (bad name or policy, E144 another
    policy than the memory's), AccessDenied, LookupError, DatabaseUnavailable."""
    label = name_text(name)
    database = env.database
    try:
        try:
            stored = catalog.read(database, label)
        except redis.exceptions.NoPermissionError:
            if as_agent is None:
                raise
            # An agent's own credential: the world as the agent sees it (its view).
            live = agent_live.viewed(database, label, as_agent, checker)
            return Attachment(live, CredentialReader(live, as_agent, database, label),
                              label)
        if stored is None and database.cluster is None and catalog.migrate(database, label):
            stored = catalog.read(database, label)  # kept under its pre-hash-tag names
        created = False
        if stored is None:
            if not create:
                raise LookupError(f"no memory called {label!r}")
            header = header_for(label, policy or "default", inline=True)
            created = catalog.create(database, checker(header, f"memory {label}").scenario,
                                     header)
            stored = catalog.read(database, label)
            if stored is None:  # dropped between its creation and this read
                raise LookupError(f"memory {label!r} was dropped while being created")
        # A process that lost the race to create the memory checks the policy too.
        if not created and policy is not None and not same_policy(policy, stored.policy):
            raise TomError([Diagnostic(
                "E144", f"memory {label!r} uses policy {stored.policy!r}, not {policy!r}",
                None, f"memory {label}",
                hint="leave the policy out to attach, or drop the memory first")])
        shard = database.shard(memory_key(label))  # the memory's one shard
        live = attached(env, stored, submit.serving_key(label if shard.clustered else None))
        with ExitStack() as undo:
            undo.enter_context(closing(live.engine))
            reader = _reader(env, live, label, as_agent)
            undo.pop_all()
        return Attachment(live, reader, label)
    except redis.exceptions.NoPermissionError as err:
        # (With as_agent set, a view the credential may not read is refused by
        # agent_live, naming the credential to issue.)
        raise AccessDenied(
            f"this connection is an agent's own credential ({err}): attach with "
            "as_agent set to that agent (docs/security.md)") from None


def _reader(env, live: LiveScenario, label: str, as_agent: Optional[str]) -> EngineReader:
    """What an administrator's session on `live` may read: every mind, or `as_agent`'s
    (its user made or repaired for its credential, its view filled in)."""
    if as_agent is None:
        return EngineReader(live)
    if as_agent not in live.scenario.agents:
        raise TomError([Diagnostic(
            "E101", f"memory {label!r} has no agent {as_agent!r}", None,
            f"memory {label}", hint="agents: " + (", ".join(live.scenario.agents)
                                                  or "none yet"))])
    database = env.database
    # Its user made (or repaired: a server without an ACL file forgets it), for the
    # agent's own credential.
    acl.grant(database, live.engine.graphs, as_agent)
    fill_view(env, label)  # a memory made before the agents' views
    # An agent reads only its own mind, never its own writes: a replica may answer it
    # where the caller accepts stale reads (docs/deployment.md).
    server = (database.replica(memory_key(label))
              if database.options.stale_reads else database.shard(memory_key(label)))
    return AgentReader(live, as_agent, server)


def create(env, name: str, policy: Optional[str]) -> bool:
    """Create memory `name` with `policy` (default `default`) unless it exists; True if
    this call created it. Raises TomError (a bad policy)."""
    header = header_for(name_text(name), policy or "default", inline=True)
    return catalog.create(env.database, checker(header, f"memory {name}").scenario,
                          header)


def load(env, name: str, path: Union[str, Path], scenario: Optional[str] = None,
         replace: bool = False) -> Attachment:
    """A new memory `name` holding the scenario of the .tom file `path` (its only one,
    or `scenario`), live: its policy, agents, rooms and every event, with the times the
    file states (its questions are not kept). The file is checked whole before anything
    is written. The caller closes `live.engine`. Raises TomError (the file's errors; E144 a
    statement a memory does not take; E110 a memory `name` that exists, unless
    `replace`, which drops it first), DatabaseUnavailable."""
    label = name_text(name)
    header, statements = _loadable(label, path, scenario)
    database = env.database
    if catalog.read(database, label) is not None:
        if not replace:
            raise TomError([Diagnostic(
                "E110", f"memory {label!r} exists", None, f"memory {label}",
                hint="choose another name, drop it first, or replace it")])
        catalog.drop(database, label)
    if not catalog.create(database, checker(header, f"memory {label}").scenario, header):
        raise TomError([Diagnostic("E110", f"memory {label!r} was created by another "
                                   "process meanwhile", None, f"memory {label}")])
    live = attached(env, catalog.read(database, label))
    with ExitStack() as undo:
        undo.enter_context(closing(live.engine))
        if statements:
            try:
                live.apply(statements, str(path))
            except DiagnosticError as err:  # pragma: no cover - checked above
                raise TomError(err.diagnostics) from None
        undo.pop_all()
    return Attachment(live, EngineReader(live), label)


def attached(env, stored: catalog.StoredMemory,
             serving: Optional[str] = None) -> LiveScenario:
    """A live scenario on a stored memory: its half-applied event (if a writer died)
    undone, then resumed from its checkpoint (or replayed whole when it has none).
    `serving`: the key its writer looks at with each commit (a session's:
    tomc/memory/submit.py `serving_key`). The caller closes its engine."""
    base = memory_key(stored.name)
    db = env.database.shard(base)  # a cluster: the memory's one shard
    graphs = catalog.memory_graphs(stored.name, catalog.agents(db, stored.name))
    # (an undo drops a checkpoint that holds its event)
    recovery.recover(db, graphs, MemoryJournal(base))
    incarnation = catalog.incarnation(db, stored.name)
    kept = checkpoint.read(db, base)
    live = _live(db, stored, kept, serving, incarnation)
    if kept is not None and not checkpoint.complete(db, base, graphs.revision_key,
                                                    live.engine.revision, live.step):
        # Events written by a tomc that kept none (or a torn hash): replay it whole.
        logger.info("the event hash of %s is not whole: replaying the memory", base)
        checkpoint.drop(db, base)
        live.engine.close()
        kept, live = None, _live(db, stored, None, serving, incarnation)
    if kept is None and live.engine.revision > 0:
        _keep(db, base, graphs, live)
    return live


def fill_view(env, name: str, tries: int = 100) -> None:
    """Give memory `name` the agents' view of its world (tomc/memory/agent_view.py) if
    it was made before it: its changes replayed and recorded under WATCH of the
    revision, again if a writer committed meanwhile. An administrator's connection:
    what `tomc token credential` and an attach as an agent run."""
    graphs = catalog.memory_graphs(name)
    shard = env.database.shard(graphs.world)
    for _ in range(tries):
        if agent_view.present(shard, graphs):
            return
        stored = catalog.read(shard, name)
        if stored is None:
            return
        live = attached(env, stored)
        try:
            _, changes = live.engine.changes_since(0)
            # In a memory an event's line is its revision (`attached`: no line base).
            events = {e.line: e for e in live.scenario.events}
            if agent_view.backfill(shard, graphs, stored.header,
                                   [(rev, events.get(rev, text)) for rev, text in changes],
                                   live.engine.revision):
                return
        finally:
            live.engine.close()
    raise DatabaseUnavailable(f"could not fill in the agents' view of memory {name}: "
                              "writers kept committing")


def _live(db: Database, stored: catalog.StoredMemory, kept: Optional[checkpoint.Checkpoint],
          serving: Optional[str], incarnation) -> LiveScenario:
    """The live scenario from `kept` (its events read when asked) or from the start, caught
    up with every statement after it."""
    base = memory_key(stored.name)
    held = checker(stored.header, f"memory {stored.name}")
    if kept is not None:
        held.state = kept.state(db, base, held.state.procedures)
    engine = FalkorEngine(db, held.scenario,
                          catalog.memory_graphs(stored.name, list(held.state.agents)),
                          revision=kept.revision if kept else 0, journal=MemoryJournal(base))
    engine.incarnation = incarnation
    engine.serving = serving
    live = LiveScenario(held, engine)
    live.catch_up()
    return live


def _keep(db: Database, base: str, graphs, live: LiveScenario) -> None:
    """A memory stored before checkpoints (or whose checkpoint was dropped): keep its
    events and a checkpoint now, so the next attach resumes there. A cache: when a writer
    commits meanwhile or the credential may not write it, this session keeps no
    checkpoint (its commits still keep their events) and the next attach tries again."""
    try:
        kept = checkpoint.backfill(db, base, graphs.revision_key, live.engine.revision,
                                   live.checker.state)
    except DatabaseUnavailable as err:
        logger.info("no checkpoint kept for %s: %s", base, err)
        kept = False
    if not kept:
        live.engine.journal.keep = None  # it does not know the event hash is whole


def _loadable(name: str, path: Union[str, Path], scenario: Optional[str]) -> tuple[str, list]:
    """(the header of memory `name` under the policy of file `path`, the statements of its
    scenario a memory keeps): the file checked whole, and checked again as the memory
    would take it. Raises TomError."""
    try:
        text = read_source(path)
    except DiagnosticError as err:
        raise TomError(err.diagnostics) from None
    result = check_text(text, str(path))
    if not result.ok:
        raise TomError(result.diagnostics, text)
    found = [s for s in result.scenarios if scenario in (None, s.name)]
    if len(found) != 1:
        names = ", ".join(s.name for s in result.scenarios) or "none"
        raise TomError([Diagnostic(
            "E160", f"{path} must hold one scenario{f' named {scenario}' if scenario else ''}"
            f" (it has: {names})", None, str(path),
            hint="name the scenario to load" if result.scenarios else "add a scenario")])
    file = parse(text, str(path))
    tree = next(i for i in file.items if isinstance(i, ast.Scenario)
                and i.name.text == found[0].name)
    inline = {i.name.text: i for i in file.items if isinstance(i, ast.Policy)}
    uses = [i for i in file.items if isinstance(i, ast.UsePolicy)]
    policy, _ = load_policy(uses[0] if uses else None, inline, Path(path).parent, str(path))
    shipped = (policy.name.text in shipped_names() and policy.name.text not in inline
               and not (uses and uses[0].target.quoted))
    header = catalog.header_source(name, policy, shipped)
    statements = [s for s in tree.statements if not isinstance(s, QUESTIONS)]
    refused = [s for s in statements if not isinstance(s, CHANGES)
               or isinstance(s, (ast.Peek, ast.Distracted))]
    if refused:
        raise TomError([Diagnostic(
            "E144", f"a memory takes events, agents/rooms and clock lines, not "
            f"`{format_statement(refused[0]).splitlines()[0]}`", refused[0].span, str(path),
            hint=refused_hint(refused[0]))], text)
    held = checker(header, f"memory {name}")
    if statements:
        try:
            held.add(statements, CHANGES, text, str(path))
        except DiagnosticError as err:
            raise TomError(err.diagnostics, text) from None
    return header, statements
