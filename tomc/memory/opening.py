"""Opening memories for writing: what a memory takes, the header a new one starts from,
and a live scenario attached to a stored one. Shared by the API (tomc/api.py) and the
applier of `tomc serve` (tomc/memory/applier.py); every refusal is a TomError whose
diagnostic says what to write instead.

    header = header_for("support", "default", inline=True)   # .tom text of an empty scenario
    text, parsed = statements_of("Maya enters chat")        # (text, AST statements)
    refuse(parsed, text, in_memory=True)                    # E144 for what apply does not take
    live = attached(db, catalog.read(db, "support"))         # LiveScenario, caught up
"""

from __future__ import annotations

import logging
from typing import Optional, Sequence, Union

from tomc.dsl import ast, build
from tomc.dsl.checker import LiveChecker
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file, format_statement
from tomc.dsl.parser import parse, parse_statements, read_source
from tomc.engine import recovery
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.live import CHANGES, LiveScenario
from tomc.memory import agent_view, catalog, checkpoint
from tomc.memory.journal import MemoryJournal
from tomc.rules import shipped_names
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable, TomError
from tomc.runtime.keys import memory_key

logger = logging.getLogger(__name__)

# What `apply` takes: .tom text, one AST statement, or several.
Statements = Union[str, ast.Node, Sequence[ast.Node]]


def statements_of(statements: Statements, origin: str = "<apply>") -> tuple[str, list]:
    """(text for diagnostics, AST statements) from .tom text or AST; TomError otherwise.
    `origin` names the text in diagnostics (`<apply>`, `<ask>`, `<check>`)."""
    if isinstance(statements, str):
        try:
            parsed = parse_statements(statements, origin)
        except DiagnosticError as err:
            raise TomError(err.diagnostics, statements) from None
        if not parsed:  # empty, blank or comments only: nothing to do is bad input
            raise TomError([Diagnostic(
                "E160", "no statement: the text is empty or holds only comments", None,
                origin, hint='e.g. "Maya enters chat" (a comment starts with #)')],
                statements)
        return statements, parsed
    items = [statements] if isinstance(statements, ast.Node) else statements
    if isinstance(items, (list, tuple)) and items and all(isinstance(s, ast.Node)
                                                          for s in items):
        return "", list(items)
    raise TomError([Diagnostic(
        "E143", f"expected .tom text or AST statements, got {type(statements).__name__}",
        None, build.PATH, hint='e.g. "Maya enters chat"')])


def refuse(parsed: list, text: str, in_memory: bool) -> None:
    """TomError (E144) for the first statement `apply` does not take: questions, clock
    lines, procedures, and in a memory peeks and distractions."""
    refused = [s for s in parsed if not isinstance(s, CHANGES) or isinstance(s, ast.Clock)
               or (in_memory and isinstance(s, (ast.Peek, ast.Distracted)))]
    if refused:
        raise TomError([Diagnostic(
            "E144", f"{'a memory' if in_memory else 'apply'} takes events and "
            f"agents/rooms lines, not `{format_statement(refused[0])}`", refused[0].span,
            "<apply>", hint=refused_hint(refused[0]))], text)


def create_memory(db: Database, name: str, policy: Optional[str]) -> bool:
    """Create memory `name` with `policy` (default `default`) unless it exists; True if this
    call created it. Raises TomError (a bad policy)."""
    header = header_for(name_text(name), policy or "default", inline=True)
    model = checker_for(header, f"memory {name}").scenario
    return catalog.create(db, model, header)


def check_new_memory(name: str, statements: Statements, policy: Optional[str] = None) -> None:
    """Raise TomError unless `statements` apply to a new, empty memory `name` under
    `policy` (default `default`): what `tomc memory apply` checks before it creates a
    memory, so that bad input creates nothing. Touches no database."""
    header = header_for(name_text(name), policy or "default", inline=True)
    checker = checker_for(header, f"memory {name}")
    text, parsed = statements_of(statements)
    refuse(parsed, text, in_memory=True)
    try:
        checker.add(parsed, CHANGES, text, "<apply>")
    except DiagnosticError as err:
        raise TomError(err.diagnostics, text) from None


def name_text(name: object) -> str:
    try:
        return build.name(name, "memory or scenario name").text
    except DiagnosticError as err:
        raise TomError(err.diagnostics) from None


def refused_hint(statement) -> str:
    """What to do instead of applying `statement` (E144)."""
    if isinstance(statement, (ast.Peek, ast.Distracted)):
        return ("peeks and distractions belong in scenario files: in a memory, another "
                "writer's event could come between one and the event it modifies")
    if isinstance(statement, ast.Clock):
        return ("write `at T` at the end of each event instead of a clock line (in a "
                "memory, another writer's event could come between it and yours)")
    if isinstance(statement, ast.Procedure):
        return "declare procedures in the policy (or the scenario file)"
    return "ask questions with ask()"


def checker_for(text: str, origin: str, scenario: Optional[str] = None) -> LiveChecker:
    try:
        return LiveChecker(text, origin, scenario)
    except DiagnosticError as err:
        raise TomError(err.diagnostics, text) from None


def header_for(name: str, policy: str, inline: bool = False) -> str:
    """The .tom text of an empty scenario `name` under `policy` (a shipped name, or a .tom
    file defining one policy). With `inline`, a file's policy is written out in full (a
    memory must not depend on a file that may change)."""
    if not isinstance(policy, str):
        raise TomError([Diagnostic("E143", f"policy must be a policy name or a .tom file path, "
                                   f"got {policy!r}", None, build.PATH)])
    if policy in shipped_names() or not policy.endswith(".tom"):
        if policy not in shipped_names():
            raise TomError([Diagnostic("E104", f"unknown policy `{policy}`", None, "<policy>",
                                       hint="a shipped policy (" + ", ".join(shipped_names())
                                       + ") or a .tom file")])
        return catalog.header_source(name, ast.Policy(name=ast.Name(text=policy)), True)
    try:
        source = read_source(policy)
        file = parse(source, policy)
    except DiagnosticError as err:
        raise TomError(err.diagnostics) from None
    found = [i for i in file.items if isinstance(i, ast.Policy)]
    if len(found) != 1:
        raise TomError([Diagnostic("E104", f"`{policy}` must define exactly one policy", None,
                                   policy)])
    if inline:
        return catalog.header_source(name, found[0], False)
    return format_file(ast.File(items=[ast.UsePolicy(target=ast.Name(text=policy, quoted=True)),
                                       ast.Scenario(name=ast.Name(text=name))]))


def same_policy(asked: str, stored: str) -> bool:
    """Whether `policy=` given to attach names the memory's policy (by name, or a file
    defining a policy of that name)."""
    if not asked.endswith(".tom"):
        return asked == stored
    try:
        file = parse(read_source(asked), asked)
    except DiagnosticError:
        return False
    return any(isinstance(i, ast.Policy) and i.name.text == stored for i in file.items)


def attached(db: Database, stored: catalog.StoredMemory,
             serving: Optional[str] = None) -> LiveScenario:
    """A live scenario on a stored memory: its half-applied event (if a writer died)
    undone, then every applied statement replayed through the checker. `serving`: the key
    its writer looks at with each commit (a session's: tomc/memory/submit.py
    `serving_key`)."""
    checker = checker_for(stored.header, f"memory {stored.name}")
    base = memory_key(stored.name)
    db = db.shard(base)  # a cluster: the memory's one shard
    graphs = catalog.memory_graphs(stored.name, catalog.agents(db, stored.name))
    # (an undo drops a checkpoint that holds its event)
    recovery.recover(db, graphs, MemoryJournal(base))
    incarnation = catalog.incarnation(db, stored.name)
    kept = checkpoint.read(db, base)
    live = _live(db, stored, checker, kept, serving, incarnation)
    if kept is not None and not checkpoint.complete(db, base, graphs.revision_key,
                                                    live.engine.revision, live.step):
        # Events written by a tomc that kept none (or a torn hash): replay it whole.
        logger.info("the event hash of %s is not whole: replaying the memory", base)
        checkpoint.drop(db, base)
        live.engine.close()
        kept, live = None, _live(db, stored, checker_for(stored.header, f"memory {stored.name}"),
                                 None, serving, incarnation)
    if kept is None and live.engine.revision > 0:
        _keep(db, base, graphs, live)
    return live


def _live(db: Database, stored: catalog.StoredMemory, checker: LiveChecker,
          kept: Optional[checkpoint.Checkpoint], serving: Optional[str],
          incarnation) -> LiveScenario:
    """The live scenario from `kept` (its events read when asked) or from the start, caught
    up with every statement after it."""
    base = memory_key(stored.name)
    if kept is not None:
        checker.state = kept.state(db, base, checker.state.procedures)
    engine = FalkorEngine(db, checker.scenario,
                          catalog.memory_graphs(stored.name, list(checker.state.agents)),
                          revision=kept.revision if kept else 0, journal=MemoryJournal(base))
    engine.incarnation = incarnation
    engine.serving = serving
    live = LiveScenario(checker, engine)
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


def fill_view(db: Database, name: str, tries: int = 100) -> None:
    """Give memory `name` the agents' view of its world (tomc/memory/agent_view.py) if it
    was made before it: its changes replayed (as `attached` does) and recorded under
    WATCH of the revision, again if a writer committed meanwhile. An administrator's
    connection: what `tomc token credential` and an attach as an agent run."""
    graphs = catalog.memory_graphs(name)
    shard = db.shard(graphs.world)
    for _ in range(tries):
        if agent_view.present(shard, graphs):
            return
        stored = catalog.read(shard, name)
        if stored is None:
            return
        live = attached(shard, stored)
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
