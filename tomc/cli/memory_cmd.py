"""`tomc memory ...`: named memories kept on FalkorDB, from shells and scripts
(tomc/memory/catalog.py; docs/storage.md).

Exit codes as elsewhere (0 ok, 1 an expectation failed, 2 bad input, 3 FalkorDB
unavailable), plus 4 when an agent (`--as`) asks about another mind or tries to write, and
6 when `--after-step` is stale (another writer got there first; nothing was written).
"""

from __future__ import annotations

import sys
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

import redis
import typer

from tomc.cli.common import (
    DATA_OPTION,
    DB_OPTION,
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_NO_DATABASE,
    EXIT_OK,
    JSON_OPTION,
    STALE_OPTION,
    STRICT_OPTION,
    WAIT_OPTION,
    database,
    emit_json,
    fail,
    with_options,
)
from tomc.memory import submit
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, StaleWrite
from tomc.runtime.keys import memory_key

if TYPE_CHECKING:
    from tomc.api import Session

# The API, the compiler and the checker are imported where used: `tomc memory apply` to a
# memory an applier serves is a thin client (tomc/memory/submit.py) and starts without them.
# Exit codes past the common ones (4 access denied, 6 stale): tomc/outcomes.py.

app = typer.Typer(help="Named memories kept on FalkorDB: apply events, ask, list, export, "
                       "import, drop. Several processes may write one memory at once.",
                  no_args_is_help=True)
AS_OPTION = typer.Option(None, "--as", help="Answer as this agent, from its own mind only.")


@contextmanager
def _session(name: str, db: Optional[str], data: Optional[Path], json_output: bool,
             policy: Optional[str] = None, as_agent: Optional[str] = None,
             create: bool = False, first: Optional[str] = None) -> Iterator[Session]:
    """The memory attached, with every error of the API mapped to its exit code. `first`:
    the statements a new memory is created for, checked before it is: bad input creates
    nothing."""
    from tomc.api import Session, TomError, check_new_memory
    from tomc.memory import catalog
    from tomc.outcomes import outcome
    with database(db, data, json_output, interactive=True) as conn:
        try:
            if create and first is not None and catalog.read(conn, name) is None:
                check_new_memory(name, first, policy)
            with Session.attach(name, db=conn, policy=policy, as_agent=as_agent,
                                create=create) as session:
                yield session
        except (TomError, LookupError, AccessDenied, StaleWrite) as err:
            # (FalkorDB's own errors are `database`'s.) The code and the message's first
            # words: tomc/outcomes.py, as MCP and HTTP answer them.
            found = outcome(err)
            if isinstance(err, StaleWrite):
                _committed(err.committed, json_output)
            message = (f"no memory called {name!r} (`tomc memory list` lists them; `tomc "
                       "memory apply` creates one)" if isinstance(err, LookupError) else err)
            fail(f"{found.says}{message}", found.exit_code, json_output)


def _text(statements: list[str]) -> str:
    """The statements as one .tom text; `-` reads them from stdin."""
    return sys.stdin.read() if statements == ["-"] else "\n".join(statements)


@app.command("apply")
def apply(name: str = typer.Argument(..., help="The memory (created if it does not exist)."),
          statements: list[str] = typer.Argument(
              ..., help="Events and agents/rooms lines in .tom syntax, one per argument or "
                        "several per line ('-' reads them from stdin). E.g. 'agents Maya, "
                        "Billing' 'Billing tells Maya refund.status = approved'."),
          policy: Optional[str] = typer.Option(
              None, "--policy", help="Policy of a new memory: a shipped name or a .tom file "
                                     "(default: default). Must match an existing memory's."),
          after_step: Optional[int] = typer.Option(
              None, "--after-step", min=0, help="Refuse (exit 6, nothing written) unless the "
                                                "memory is at this step."),
          key: Optional[str] = typer.Option(
              None, "--key", help="Idempotency key: run again with the same key after a "
                                  "failure, and what committed is not applied twice "
                                  "(default: a new one)."),
          as_agent: Optional[str] = AS_OPTION,
          db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          wait_replicas: int = WAIT_OPTION,
          json_output: bool = JSON_OPTION) -> None:
    """Check, then record, statements in memory NAME, each event at the next step. All are
    checked before any is written: on bad input nothing is (exit 2), and a new memory is
    not created. On a server `tomc serve` runs, the memory's applier commits them (in one
    transaction); otherwise each statement is its own transaction: see docs/storage.md,
    "Limits". A failure after part of the batch committed prints what did; rerun with the
    same --key to apply only the rest."""
    text = _text(statements)
    db = with_options(db, wait_replicas, False)
    if key is not None and not key:
        fail("--key must not be empty", EXIT_BAD_INPUT, json_output)
    with database(db, data, json_output, interactive=True) as conn:
        try:
            own = as_agent is not None and _own_credential(conn, name)
        except (redis.RedisError, DatabaseUnavailable) as err:
            fail(f"FalkorDB unavailable: {err}", EXIT_NO_DATABASE, json_output)
        # A cluster: the memory's shard, where its applier (if `tomc serve --db` runs one)
        # holds its lease.
        shard = conn.shard(memory_key(name)) if conn.clustered else conn
        clustered = name if conn.clustered else None
        if own and not submit.serving(shard.redis, clustered):
            fail(f"{as_agent}'s own credential writes only through the memory's applier, and "
                 f"none serves memory {name} (is `tomc serve` running"
                 f"{' --db on the cluster' if clustered else ''}? docs/security.md)",
                 EXIT_NO_DATABASE, json_output)
        if (as_agent is None or own) and submit.serving(shard.redis, clustered):
            try:
                reply = submit.submit(shard.redis, name, text, key or uuid.uuid4().hex,
                                      after_step, create=None if own else policy or "default",
                                      policy=None if own else policy, as_agent=as_agent,
                                      clustered=conn.clustered,
                                      wait_replicas=conn.options.wait_replicas)
            except submit.NoApplier:
                reply = None  # withdrawn, nothing applied: write it here
            except DatabaseUnavailable as err:
                fail(f"FalkorDB unavailable: {err}", EXIT_NO_DATABASE, json_output)
            if reply is not None:
                _replied(name, reply, json_output)
    with _session(name, db, data, json_output, policy, as_agent, create=as_agent is None,
                  first=text) as s:
        try:
            events = s.apply(text, after_step=after_step, idempotency_key=key)
        except DatabaseUnavailable as err:
            _committed(err.committed, json_output)
            raise
        except Exception as err:  # TomError, StaleWrite: `_session` maps them
            _committed(getattr(err, "committed", []), json_output)
            raise
        if json_output:
            emit_json({"memory": s.memory, "step": s.step,
                       "events": [_event_json(e) for e in events]})
        else:
            for e in events:
                typer.echo(_event_line(e.step, e.text, e.witnesses))
            typer.echo(f"memory {s.memory} at step {s.step}")
    raise typer.Exit(EXIT_OK)


def _own_credential(conn, name: str) -> bool:
    """Whether `conn` logs in with an agent's own credential (`tomc token credential`), not
    as an administrator (who may log in as a named user too): that user may not even ask
    whether memory `name`'s incarnation key exists (tomc/memory/acl.py)."""
    try:
        conn.shard(memory_key(name)).redis.exists(memory_key(name, "incarnation"))
    except redis.exceptions.NoPermissionError:
        return True
    return False


def _replied(name: str, raw: dict, json_output: bool) -> None:
    """Print an applier's reply (tomc/memory/replies.py) and exit with its code."""
    from tomc.memory.replies import Reply

    reply = Reply.of(raw)
    if reply.error is None:
        if json_output:
            emit_json({"memory": name, "step": reply.step, "events": reply.events})
        else:
            for e in reply.events:
                typer.echo(_event_line(e["step"], e["text"], e["witnesses"]))
            typer.echo(f"memory {name} at step {reply.step}")
        raise typer.Exit(EXIT_OK)
    from tomc.outcomes import DATABASE_UNAVAILABLE, outcome  # (the checker's types: on failure)

    _committed(reply.committed, json_output)
    failure = reply.failure()
    found = outcome(failure) or DATABASE_UNAVAILABLE
    message = reply.message or str(failure)
    if isinstance(failure, LookupError):
        message += " (`tomc memory list` lists them; `tomc memory apply` creates one)"
    fail(found.says + message, found.exit_code, json_output)


def _committed(events: list, json_output: bool) -> None:
    """On stderr: the events of a failed batch that did commit (docs/storage.md,
    "Retries"), as events or as the dicts of an applier's reply."""
    for e in [] if json_output else events:
        step, text, witnesses = (e["step"], e["text"], e["witnesses"]) if isinstance(e, dict) \
            else (e.step, e.text, e.witnesses)
        typer.echo("committed before the failure: " + _event_line(step, text, witnesses),
                   err=True)


def _event_line(step: int, text: str, witnesses) -> str:
    return f"step {step}: {text}   [witnesses: {', '.join(sorted(witnesses)) or 'none'}]"


@app.command("ask")
def ask(name: str = typer.Argument(..., help="The memory."),
        questions: list[str] = typer.Argument(
            ..., help="'ask ...' or 'expect ...' lines (the leading `ask` may be left out), "
                      "e.g. 'Maya believes refund.status' 'expect truth refund.status = "
                      "rejected' 'false_beliefs'."),
        as_agent: Optional[str] = AS_OPTION,
        db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
        stale_reads: bool = STALE_OPTION,
        json_output: bool = JSON_OPTION, strict: bool = STRICT_OPTION) -> None:
    """Answer questions from the memory as it is now, as `tomc run` prints them. A question
    about a key no event wrote gets a warning (W180) on stderr, an error with `--strict`.
    Exit 0, or 1 when an `expect` does not hold, 2 on bad input, 4 when `--as` asks about
    another mind."""
    from tomc.api import TomWarning
    from tomc.cli.report import render_run
    from tomc.runner import ScenarioRun
    db = with_options(db, 0, stale_reads)
    with _session(name, db, data, json_output, as_agent=as_agent) as s:
        s.strict = s.strict or strict
        answers, found = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TomWarning)  # printed below, as diagnostics
            for question in questions:
                answers.append(s.ask(question))
                found += s.warnings
                for warning in s.warnings:
                    typer.echo(warning.render(None), err=True)
        run = ScenarioRun(s.scenario, answers)
        if json_output:
            emit_json({"memory": s.memory, "step": s.step,
                       "answers": [a.to_json() for a in answers],
                       "warnings": [w.to_json() for w in found]})
        else:
            typer.echo(render_run(run))
    raise typer.Exit(EXIT_FAILED if run.failed else EXIT_OK)


@app.command("search")
def search(name: str = typer.Argument(..., help="The memory."),
           text: str = typer.Argument(..., help="What to look for, in words: 'payments "
                                                "outage'. Each word also finds longer words "
                                                "it starts (`pay` finds `payments`)."),
           limit: int = typer.Option(20, "--limit", min=1, help="Show the best N hits."),
           mode: Optional[str] = typer.Option(
               None, "--mode", metavar="text|meaning|hybrid",
               help="text: words only; meaning: nearest in meaning; hybrid: both, with "
                    "--about, authority and recency (default: hybrid when "
                    "TOMC_EMBED_PROVIDER names an embedding model, else text)."),
           about: Optional[str] = typer.Option(
               None, "--about", metavar="SUBJECT",
               help="A focal subject: hits fewer links from it rank higher (meaning, "
                    "hybrid)."),
           as_agent: Optional[str] = AS_OPTION,
           db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    """Search keys, values, sources and events' text, ranked: each hit with its key, value,
    holder chain, step, time and source (docs/language.md, "Search"); by meaning too with
    an embedding model ("Search by meaning"). With `--as`, only that agent's own mind."""
    with _session(name, db, data, json_output, as_agent=as_agent) as s:
        found = s.search(text, limit=limit, mode=mode, about=about)
        if json_output:
            emit_json({"memory": s.memory, "step": s.step, **found.to_json()})
        else:
            typer.echo("\n".join(found.lines()))
    raise typer.Exit(EXIT_OK)


@app.command("describe")
def describe_(name: str = typer.Argument(..., help="The memory."),
              as_agent: Optional[str] = AS_OPTION,
              db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
              json_output: bool = JSON_OPTION) -> None:
    """What the memory has: agents, rooms, sources with authority, procedures, keys written
    so far (how many events, last step), policy and depth. With `--as`, only keys from
    events that agent witnessed."""
    with _session(name, db, data, json_output, as_agent=as_agent) as s:
        found = s.describe()
        if json_output:
            emit_json(found.to_json())
        else:
            typer.echo("\n".join(found.lines()))
    raise typer.Exit(EXIT_OK)


@app.command("list")
def list_(db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          json_output: bool = JSON_OPTION) -> None:
    """List the memories on the server: name, policy, step reached, agents."""
    from tomc.memory import catalog
    with database(db, data, json_output, interactive=True) as conn:
        found = [{"name": m.name, "policy": m.policy, "step": m.step,
                  "agents": catalog.agents(conn, m.name)} for m in catalog.stored(conn)]
    if json_output:
        emit_json({"memories": found})
    elif not found:
        typer.echo("no memories")
    for m in [] if json_output else found:
        typer.echo(f"{m['name']}  (policy {m['policy']}, step {m['step']}, agents: "
                   f"{', '.join(m['agents']) or 'none'})")
    raise typer.Exit(EXIT_OK)


@app.command("export")
def export(name: str = typer.Argument(..., help="The memory."),
           out: Optional[Path] = typer.Option(None, "-o", "--out",
                                              help="Write to this file (default: stdout)."),
           db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    """Print the memory as one .tom file (policy, agents, rooms, every event in step order)
    that `tomc run` replays to the same answers."""
    with _session(name, db, data, json_output) as s:
        text = s.export()
    if out is not None:
        out.write_text(text, encoding="utf-8")
    if json_output:
        emit_json({"memory": name, "tom": text, "out": str(out) if out else None})
    elif out is None:
        typer.echo(text, nl=False)
    raise typer.Exit(EXIT_OK)


@app.command("import")
def import_(name: str = typer.Argument(..., help="The new memory."),
            file: Path = typer.Argument(..., help="A .tom file: an export of a memory (`tomc "
                                                  "memory export`) or any scenario file."),
            scenario: Optional[str] = typer.Option(
                None, "--scenario", help="The scenario to load, when the file has several."),
            replace: bool = typer.Option(False, "--replace",
                                         help="Drop memory NAME first if it exists."),
            db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
            json_output: bool = JSON_OPTION) -> None:
    """Load a scenario file into a new memory NAME: its policy, agents, rooms and every
    event, at the times the file states (its expect/ask lines are not kept). The file is
    checked whole first: on bad input nothing is written (exit 2). A memory NAME that
    exists is refused (exit 2) unless --replace."""
    from tomc.api import Session, TomError
    with database(db, data, json_output, interactive=True) as conn:
        try:
            with Session.load(name, file, db=conn, scenario=scenario, replace=replace) as s:
                step, agents = s.step, list(s.scenario.agents)
        except TomError as err:
            fail(f"bad input:\n{err}", EXIT_BAD_INPUT, json_output)
    if json_output:
        emit_json({"memory": name, "step": step, "agents": agents, "file": str(file)})
    else:
        typer.echo(f"memory {name} at step {step} (agents: {', '.join(agents) or 'none'}), "
                   f"from {file}")
    raise typer.Exit(EXIT_OK)


@app.command("report")
def report(name: str = typer.Argument(..., help="The memory."),
           output: Optional[Path] = typer.Option(
               None, "-o", "--output", help="The HTML file to write (default: NAME.html in "
                                            "the current folder)."),
           db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    """Write the report page of memory NAME as it is now, as `tomc report` writes one for a
    file (docs/review.md): a summary first (false beliefs, who is out of date, readiness),
    the timeline with what each event changed, each key's grid (most disagreed-about
    first), the claims on both clocks. Readiness: every procedure of the policy, for the
    truth and for each agent."""
    from tomc.review.html import render_page, report_data
    from tomc.runner import ScenarioRun
    with _session(name, db, data, json_output) as s:
        s.refresh()
        scenario = s.scenario
        answers = [s.ready(procedure, for_=chain) for procedure in scenario.procedures
                   for chain in [None, *scenario.agents]]
        page = report_data(ScenarioRun(scenario, answers, view_at=s.view), "falkordb")
    target = output or Path(f"{name}.html")
    try:
        target.write_text(render_page(f"memory {name}", "falkordb", [page]), encoding="utf-8")
    except OSError as err:
        fail(f"cannot write {target}: {err.strerror}", EXIT_BAD_INPUT, json_output)
    if json_output:
        emit_json({"memory": name, "written": str(target), "step": page["steps"]})
    else:
        typer.echo(f"wrote {target} (memory {name} at step {page['steps']})")
    raise typer.Exit(EXIT_OK)


@app.command("drop")
def drop(name: str = typer.Argument(..., help="The memory."),
         db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
         json_output: bool = JSON_OPTION) -> None:
    """Delete the memory: its graphs, revision and its agents' FalkorDB users. Exit 2 if
    there is no such memory."""
    from tomc.memory import catalog
    with database(db, data, json_output, interactive=True) as conn:
        dropped = catalog.drop(conn, name)
    if not dropped:
        fail(f"no memory called {name!r}", EXIT_BAD_INPUT, json_output)
    if json_output:
        emit_json({"dropped": name})
    else:
        typer.echo(f"dropped memory {name}")
    raise typer.Exit(EXIT_OK)


@app.command("requests")
def requests_(name: str = typer.Argument(..., help="The memory."),
             drop_ids: Optional[list[str]] = typer.Option(
                 None, "--drop", help="Drop the request with this id (repeatable)."),
             drop_all: bool = typer.Option(False, "--drop-all",
                                           help="Drop every request listed."),
             db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
             json_output: bool = JSON_OPTION) -> None:
    """List the requests the memory's applier could not apply (its dead-letter list,
    newest first: id, when, what failed, the start of what was queued), or drop them.
    Its writer was answered with the error when its reply list could be trusted; a retry
    with the same idempotency key applies what of it did not commit (docs/storage.md, "The
    applier"). Exit 2 for an id not listed, or a memory that does not exist."""
    from tomc.memory import catalog, dead_letters
    with database(db, data, json_output, interactive=True) as conn:
        if catalog.read(conn, name) is None and not dead_letters.listed(conn, name):
            fail(f"no memory called {name!r}", EXIT_BAD_INPUT, json_output)
        listed = dead_letters.listed(conn, name)
        unknown = sorted(set(drop_ids or ()) - {e["id"] for e in listed})
        if unknown:
            fail(f"no request {', '.join(unknown)} in the dead-letter list of memory "
                 f"{name!r} (`tomc memory requests {name}` lists them)", EXIT_BAD_INPUT,
                 json_output)
        dropped = dead_letters.drop(conn, name, drop_ids or ()) \
            if drop_ids or drop_all else []
    if json_output:
        emit_json({"memory": name, "requests": [] if dropped else listed,
                   "dropped": dropped})
    elif drop_ids or drop_all:
        typer.echo(f"dropped {len(dropped)} requests of memory {name}")
    elif not listed:
        typer.echo(f"memory {name}: no request failed")
    for entry in [] if json_output or drop_ids or drop_all else listed:
        typer.echo(f"{entry['id']}  {entry['at']}  {entry['bytes']} bytes  "
                   f"{entry['error'][:160]}\n    {entry['request'][:160]!r}")
    raise typer.Exit(EXIT_OK)


@app.command("migrate")
def migrate(names: Optional[list[str]] = typer.Argument(
                None, help="The memories (default: every memory kept under the old names)."),
            db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
            json_output: bool = JSON_OPTION) -> None:
    """Rename memories kept under the names tomc used before the hash tag (`tomem:NAME:...`) to
    `tomem:{NAME}:...`, each in one transaction (docs/deployment.md, "Upgrading"). Attaching
    to such a memory migrates it too. Run it on the single server, before moving to a
    cluster."""
    from tomc.memory import catalog
    with database(db, data, json_output) as conn:
        migrated = [n for n in (names or catalog.legacy_names(conn)) if catalog.migrate(conn, n)]
    if json_output:
        emit_json({"migrated": migrated})
    elif not migrated:
        typer.echo("nothing to migrate")
    for name in [] if json_output else migrated:
        typer.echo(f"migrated memory {name}")
    raise typer.Exit(EXIT_OK)


@app.command("grant")
def grant(names: Optional[list[str]] = typer.Argument(
              None, help="The memories (default: every memory)."),
          sync: bool = typer.Option(False, "--sync", help="Create or repair the users that "
                                    "are missing or wrong (default: only report them)."),
          db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          json_output: bool = JSON_OPTION) -> None:
    """Check the agents' FalkorDB users (tomc/memory/acl.py) on every node: the server, or
    every master and replica of a cluster (after adding a node, a failover, or a restart
    without an ACL file). Exit 1 when some are missing and --sync was not given."""
    from tomc.memory import acl, catalog
    with database(db, data, json_output) as conn:
        chosen = names or [m.name for m in catalog.stored(conn)]
        wrong = {n: acl.reconcile(conn, catalog.memory_graphs(n), fix=sync) for n in chosen}
    if json_output:
        emit_json({"users": wrong, "synced": sync})
    for name, count in [] if json_output else wrong.items():
        verb = "made right" if sync else "missing or wrong"
        typer.echo(f"{name}: {count} agent users {verb}")
    raise typer.Exit(EXIT_FAILED if any(wrong.values()) and not sync else EXIT_OK)


def _event_json(event) -> dict:
    return {"step": event.step, "kind": event.kind, "text": event.text, "line": event.line,
            "witnesses": sorted(event.witnesses)}
