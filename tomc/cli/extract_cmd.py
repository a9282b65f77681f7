"""`tomc extract [INPUT]`: candidate .tom statements from conversation, checked against the
memory (or scenario) they are for; written only with `--apply NAME` (docs/extract.md).

Exit codes: 0 done (candidates listed, and applied if asked, or found applied before), 2 bad
input (no model configured, no API key or SDK, an unreadable chat export, a model answer that
is not statements, applying declined), 3 the model or FalkorDB unavailable, 6 another writer
changed the memory between the check and the write (nothing written).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Optional

import typer

from tomc.analysis.quoting import quote
from tomc.api import Session, TomError
from tomc.cli.common import (DATA_OPTION, DB_OPTION, EXIT_BAD_INPUT, EXIT_NO_DATABASE,
                             EXIT_OK, JSON_OPTION, database, emit_json, fail)
from tomc.dsl.diagnostics import DiagnosticError
from tomc.extract.candidates import ExtractError
from tomc.extract.messages import read_messages
from tomc.extract.pipeline import Extraction, apply, judged, prompt_for
from tomc.extract.providers import (NotConfigured, ProviderError, ProviderSettings,
                                    configured)
from tomc.runtime.errors import StaleWrite

EXIT_STALE = 6


def extract(source: str = typer.Argument("-", metavar="INPUT", help="A text file or a chat "
                                         "export (.json): '-' (the default) reads stdin."),
            memory: Optional[str] = typer.Option(None, "--memory", "-m", help="Check the "
                                                 "candidates against this memory (and apply "
                                                 "to it with --apply)."),
            apply_to: Optional[str] = typer.Option(None, "--apply", metavar="NAME",
                                                   help="Write the candidates that check to "
                                                        "memory NAME (asks first; --yes for "
                                                        "scripts)."),
            scenario: Optional[Path] = typer.Option(None, "--scenario", help="Check the "
                                                    "candidates against this .tom file's "
                                                    "scenario instead (nothing is written)."),
            policy: Optional[str] = typer.Option(None, "--policy", help="Policy of a memory "
                                                 "that does not exist yet (default: default)."),
            yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
            include_flagged: bool = typer.Option(False, "--include-flagged", help="Also "
                                                 "write candidates whose values read like "
                                                 "instructions (left out by default)."),
            answer: Optional[Path] = typer.Option(None, "--answer", help="Use this recorded "
                                                  "model answer (JSON) instead of asking a "
                                                  "model: to replay or review one."),
            save_answer: Optional[Path] = typer.Option(None, "--save-answer", metavar="FILE",
                                                       help="Write the model's raw answer to "
                                                            "FILE, to replay with --answer."),
            narration: bool = typer.Option(False, "--narration", help="Prose (a message "
                                           "with no speaker) is a narrator's account you "
                                           "trust: its candidates need no author."),
            prompt_only: bool = typer.Option(False, "--prompt", help="Print the prompt a model "
                                             "would get, and exit (no model needed)."),
            provider: Optional[str] = typer.Option(None, "--provider", help="anthropic or "
                                                   "openai (any OpenAI-compatible server); "
                                                   "default $TOMC_EXTRACT_PROVIDER."),
            model: Optional[str] = typer.Option(None, "--model", help="The model; default "
                                                "$TOMC_EXTRACT_MODEL."),
            base_url: Optional[str] = typer.Option(None, "--base-url", help="An OpenAI-"
                                                   "compatible server, e.g. http://127.0.0.1:"
                                                   "8080/v1 (llama.cpp, vLLM, Ollama)."),
            db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
            json_output: bool = JSON_OPTION) -> None:
    """Turn conversation into candidate .tom statements with a model of your choice, each
    checked against the memory it is for and tied to the words it came from. Nothing is
    written unless `--apply NAME` is given, and then only the candidates that check."""
    if memory and apply_to and memory != apply_to:
        fail(f"--memory {memory} and --apply {apply_to} name different memories",
             EXIT_BAD_INPUT, json_output)
    if scenario and (memory or apply_to):
        fail("--scenario checks against a file, which is never written: leave out "
             "--memory/--apply, or --scenario", EXIT_BAD_INPUT, json_output)
    name = apply_to or memory
    messages = _messages(source, json_output)
    with ExitStack() as stack:
        conn = stack.enter_context(database(db, data, json_output)) if name else None
        session = _session(stack, name, conn, scenario, policy, json_output)
        if prompt_only:
            prompt = prompt_for(messages, session, narration)
            if json_output:
                emit_json({"system": prompt.system, "user": prompt.user,
                           "schema": prompt.schema})
            else:
                typer.echo(f"# system\n{prompt.system}\n\n# user\n{prompt.user}")
            raise typer.Exit(EXIT_OK)
        extraction = _extraction(messages, session, answer, save_answer,
                                 dict(include_flagged=include_flagged, narration=narration),
                                 dict(provider=provider, model=model, base_url=base_url),
                                 json_output)
        if not json_output:
            _show(extraction)
        if apply_to is not None and _confirmed(extraction, apply_to, yes, json_output):
            session = _writable(stack, session, apply_to, conn, policy, json_output)
            _apply(extraction, session, apply_to, json_output)
    if json_output:
        emit_json(extraction.as_json())
    raise typer.Exit(EXIT_OK)


def _messages(source: str, json_output: bool) -> list:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        fail(f"cannot read {source}: {err}", EXIT_BAD_INPUT, json_output)
    try:
        messages = read_messages(text, "<stdin>" if source == "-" else source)
    except DiagnosticError as err:
        fail("\n".join(d.render(None) for d in err.diagnostics), EXIT_BAD_INPUT, json_output)
    if not messages:
        fail(f"{'stdin' if source == '-' else source} holds no message", EXIT_BAD_INPUT,
             json_output)
    return messages


def _session(stack: ExitStack, name: Optional[str], conn, scenario: Optional[Path],
             policy: Optional[str], json_output: bool) -> Session:
    """What the candidates are checked against: the memory when it exists, else a scenario
    file, else an empty scenario under `policy` (on the reference engine: nothing of it is
    stored, and a memory is not created before something is written to it)."""
    try:
        if name is not None:
            try:
                return stack.enter_context(Session.attach(name, db=conn, policy=policy,
                                                          create=False))
            except LookupError:
                pass
        if scenario is not None:
            return stack.enter_context(Session.open(scenario, engine="reference"))
        return stack.enter_context(Session.open(policy=policy or "default",
                                                name=name or "extract", engine="reference"))
    except TomError as err:
        fail(f"bad input:\n{err}", EXIT_BAD_INPUT, json_output)


def _extraction(messages: list, session: Session, answer: Optional[Path],
                save_answer: Optional[Path], checks: dict, options: dict,
                json_output: bool) -> Extraction:
    """The candidates (checked as `checks` say: include_flagged, narration): from the
    recorded `answer`, else from the model the `options` (--provider, --model, --base-url),
    the environment or the config file choose; the answer kept in `save_answer` first."""
    prompt = prompt_for(messages, session, checks["narration"])
    try:
        if answer is not None:
            try:
                text, label = answer.read_text(encoding="utf-8"), f"recorded answer {answer}"
            except (OSError, UnicodeDecodeError) as err:
                fail(f"cannot read {answer}: {err}", EXIT_BAD_INPUT, json_output)
        else:
            provider = configured(ProviderSettings.load(**options))
            if not json_output:
                typer.echo(f"asking {provider.label} ...", err=True)
            text, label = provider.complete(prompt), provider.label
        if save_answer is not None:
            _save(text, save_answer, json_output)
        return judged(messages, prompt, text, session, label, **checks)
    except NotConfigured as err:
        fail(str(err), EXIT_BAD_INPUT, json_output)
    except ProviderError as err:
        fail(f"model unavailable: {err}", EXIT_NO_DATABASE, json_output)
    except ExtractError as err:
        fail(err.diagnostic.render(None), EXIT_BAD_INPUT, json_output)


def _save(text: str, path: Path, json_output: bool) -> None:
    """Keep the model's raw answer in `path` (before it is parsed: an answer refused whole
    is worth keeping too)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        fail(f"cannot write {path}: {err}", EXIT_BAD_INPUT, json_output)


def _writable(stack: ExitStack, session: Session, name: str, conn, policy: Optional[str],
               json_output: bool) -> Session:
    """The memory to write: the one checked against, or (when it did not exist) created now."""
    if session.memory == name:
        return session
    try:
        return stack.enter_context(Session.attach(name, db=conn, policy=policy))
    except TomError as err:
        fail(f"bad input:\n{err}", EXIT_BAD_INPUT, json_output)


def _confirmed(extraction: Extraction, name: str, yes: bool, json_output: bool) -> bool:
    """Whether to write (asked on a terminal unless `yes`; exit 2 where nobody can answer).
    False when there is nothing to write: no memory is created for nothing."""
    count = len(extraction.to_write)
    if count == 0:
        if not json_output and extraction.already_applied:
            steps = sorted({c.step for c in extraction.candidates if c.step})
            typer.echo(f"already applied: memory {name} holds every candidate that checks"
                       + (f" (steps {', '.join(map(str, steps))})" if steps else "")
                       + "; nothing written")
        elif not json_output:
            typer.echo(f"nothing to apply to memory {name}")
        return False
    if yes:
        return True
    if not sys.stdin.isatty() or json_output:
        fail(f"not applied: pass --yes to write {count} statements to memory {name} "
             "without being asked", EXIT_BAD_INPUT, json_output)
    if not typer.confirm(f"Apply {count} statements to memory {name}?", default=False):
        fail("not applied", EXIT_BAD_INPUT, json_output)
    return True


def _apply(extraction: Extraction, session: Session, name: str, json_output: bool) -> None:
    try:
        events = apply(extraction, session)
    except StaleWrite as err:
        fail(f"stale write: {err}", EXIT_STALE, json_output)
    except TomError as err:
        fail(f"bad input:\n{err}", EXIT_BAD_INPUT, json_output)
    if json_output:
        return
    if extraction.repeated:
        steps = ", ".join(str(e.step) for e in extraction.applied)
        typer.echo(f"already applied: this conversation was applied to memory {name} before"
                   + (f" (steps {steps})" if steps else "") + "; nothing written")
    for event in events:
        typer.echo(f"step {event.step}: {event.text}")
    typer.echo(f"memory {name} at step {session.step}")


def _show(extraction: Extraction) -> None:
    """Each candidate with its status, the words it came from, and why it was refused."""
    for c in extraction.candidates:
        cited = f"message {c.message}: {quote(c.quote)}"
        typer.echo(f"{c.index:>3} {c.status:<8} {c.statement}   [{cited}]")
        if c.flags:
            typer.echo(f"             flagged: {', '.join(c.flags)} (written only with "
                       "--include-flagged)")
        if c.status == "present":
            typer.echo("             already in the memory" + (f" (step {c.step})" if c.step
                                                               else "") + ": not written again")
        for diagnostic in c.diagnostics:
            shown = diagnostic.render(c.statement).replace("\n", "\n             ")
            typer.echo(f"             {shown}")
    counts = {s: sum(c.status == s for c in extraction.candidates)
              for s in ("ok", "flagged", "refused", "present")}
    held = f", {counts['present']} present" if counts["present"] else ""
    typer.echo(f"{len(extraction.candidates)} candidates from {len(extraction.messages)} "
               f"messages: {counts['ok']} ok, {counts['flagged']} flagged, "
               f"{counts['refused']} refused{held} ({extraction.model})")
