"""What every verb shares: loading and checking files, printing diagnostics, exit codes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, NoReturn, Optional, Sequence

import redis
import typer

from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable

if TYPE_CHECKING:  # the checker and runner are imported where used: `tomc memory apply`
    # through an applier must start without the compiler (tomc/memory/submit.py)
    from tomc.dsl.checker import CheckResult
    from tomc.dsl.diagnostics import Diagnostic
    from tomc.dsl.program import ScenarioModel
    from tomc.runner import ScenarioRun

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_NO_DATABASE = 0, 1, 2, 3

DB_OPTION = typer.Option(None, "--db", envvar="FALKORDB_URL",
                         help="FalkorDB server URL (redis://host:port or unix:///path.sock). "
                              "Default: an embedded FalkorDB started for this command.")
WAIT_OPTION = typer.Option(0, "--wait-replicas", min=0,
                           help="After each commit, wait until N replicas have it (WAIT): an "
                                "acknowledged event survives its master's failover. Needs --db.")
STALE_OPTION = typer.Option(False, "--stale-reads",
                            help="Let an agent's reads (--as) come from a replica, which may "
                                 "lag its master by a few events. Needs --db.")
DATA_OPTION = typer.Option(None, "--data",
                           help="Data folder of the embedded FalkorDB "
                                "(default: $TOMC_DATA or ~/.local/share/tomc).")
JSON_OPTION = typer.Option(False, "--json", help="Machine-readable output on stdout.")
# `tomc http` and `tomc mcp --http`: where to listen, and which Host headers to answer.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
HOST_OPTION = typer.Option("127.0.0.1", "--host",
                           help="Address to listen on (0.0.0.0: every interface; put TLS in "
                                "front, tokens travel in headers).")
ALLOWED_HOST_OPTION = typer.Option(
    None, "--allowed-host", help="A Host header to answer (repeatable; e.g. memory.example.com "
                                 "behind a proxy). Default: the loopback names when --host is "
                                 "a loopback address, else any.")
KEEP_OPTION = typer.Option(False, "--keep-graphs",
                           help="Leave each scenario's graphs (tom:NAME:...) on the server after "
                                "its answers. Default: dropped once answered, so a folder of "
                                "any size runs in bounded server memory.")


STRICT_OPTION = typer.Option(False, "--strict", envvar="TOMC_STRICT",
                             help="Warnings are errors (exit 2): for CI, where a question about "
                                  "a key no event wrote (W180) is a misspelling to fix.")


class EngineChoice(str, Enum):
    """The engines a run may use (tomc/runner.py)."""

    falkordb = "falkordb"
    reference = "reference"


ENGINE_OPTION = typer.Option(
    EngineChoice.falkordb, "--engine",
    help="falkordb (compiled Cypher on FalkorDB) or reference (the pure-Python interpreter).")


def answered_hosts(host: str, allowed: Optional[Sequence[str]]) -> Optional[list[str]]:
    """The Host headers a server listening on `host` answers: `allowed` when given, else on
    a loopback address its names (a web page elsewhere cannot reach it through a name it
    controls: DNS rebinding), else any (None)."""
    if allowed:
        return list(allowed)
    return [*LOOPBACK, "[::1]"] if host in LOOPBACK else None


def check_all(files: list[Path], quiet_json: bool = False,
              strict: bool = False) -> list[CheckResult]:
    """Check every file; print diagnostics to stderr (unless JSON output is wanted). With
    `strict`, warnings count as errors (the file is not run)."""
    from tomc.dsl.checker import check_file
    results = [check_file(f) for f in files]
    if strict:
        for result in results:
            result.diagnostics = [strictly(d) for d in result.diagnostics]
            if not result.ok:
                result.scenarios = []
    if not quiet_json:
        for result in results:
            for diagnostic in result.diagnostics:
                typer.echo(diagnostic.render(result.source), err=True)
            if result.suppressed:
                typer.echo(f"{result.path}: {result.suppressed} more errors not shown", err=True)
    return results


def strictly(diagnostic: Diagnostic) -> Diagnostic:
    """`diagnostic`, a warning turned error (`--strict`, TOMC_STRICT)."""
    return dataclasses.replace(diagnostic, severity="error")


def diagnostics_json(results: list[CheckResult]) -> list[dict]:
    """Every diagnostic of every file, as JSON objects."""
    return [d.to_json() for r in results for d in r.diagnostics]


def emit_json(payload) -> None:
    """Print one JSON document on stdout."""
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def fail(message: str, code: int, json_output: bool = False) -> NoReturn:
    """Print one `tomc: ...` line on stderr (and, with --json, `{"error", "exit_code"}` on
    stdout), then exit with `code`."""
    typer.echo(f"tomc: {message}", err=True)
    if json_output:
        emit_json({"error": message, "exit_code": code})
    raise typer.Exit(code)


def with_options(url: Optional[str], wait_replicas: int, stale_reads: bool) -> Optional[str]:
    """`url` (--db or $FALKORDB_URL) with the options --wait-replicas and --stale-reads give
    (tomc/runtime/connection.py `Options`); bad input (exit 2) without a server URL: the
    embedded FalkorDB has no replicas."""
    if not wait_replicas and not stale_reads:
        return url
    if not url:
        fail("--wait-replicas and --stale-reads are for a server with replicas: name it with "
             "--db (the embedded FalkorDB has none)", EXIT_BAD_INPUT)
    extra = ([f"wait_replicas={wait_replicas}"] if wait_replicas else []) + \
        (["stale_reads=yes"] if stale_reads else [])
    return url + ("&" if "?" in url else "?") + "&".join(extra)


@contextmanager
def database(url: Optional[str], data: Optional[Path], json_output: bool = False,
             interactive: bool = False) -> Iterator[Database]:
    """Connect, or print one line and exit 3 when FalkorDB is unavailable. `--data` is for
    the embedded FalkorDB only: with a server URL (`--db` or FALKORDB_URL) it is bad input.
    `interactive`: statements time out sooner (tomc/runtime/connection.py)."""
    if url and data:
        fail(f"--data {data} is for the embedded FalkorDB, but a server is named ({url}, from "
             "--db or FALKORDB_URL); drop one of them", EXIT_BAD_INPUT, json_output)
    from tomc.memory.environment import Environment  # the compiler: only when connecting

    try:
        with Environment(url, data, interactive=interactive) as env:
            yield env.database
    except DatabaseUnavailable as err:
        fail(f"database unavailable: {err}", EXIT_NO_DATABASE, json_output)
    except redis.RedisError as err:  # the server failed a statement (disk full, killed, ...)
        fail(f"FalkorDB failed: {str(err).splitlines()[0]}", EXIT_NO_DATABASE, json_output)


def _distinct_names(scenarios: list[ScenarioModel]) -> None:
    """Two scenarios of one name would share graphs: the later would replace the earlier's.
    Within a file the checker reports it (E110); across files, here, with exit 2."""
    seen: dict[str, str] = {}
    for scenario in scenarios:
        if scenario.name in seen:
            typer.echo(f"{scenario.path}:{scenario.line}:1: error[E110]: scenario "
                       f"`{scenario.name}` is also defined in {seen[scenario.name]}; their "
                       "graphs would collide", err=True)
            raise typer.Exit(EXIT_BAD_INPUT)
        seen[scenario.name] = scenario.path


def expand(paths: list[Path]) -> list[Path]:
    """Files as given; folders become every .tom file below them, sorted. A folder with no
    .tom file is bad input (exit 2): a mistyped path in CI must not pass as "0 failed"."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("*.tom"))
            if not found:
                typer.echo(f"tomc: no .tom file under {path}", err=True)
                raise typer.Exit(EXIT_BAD_INPUT)
            out.extend(found)
        else:
            out.append(path)
    return out


def run_files(files: list[Path], json_output: bool, engine: EngineChoice, url: Optional[str],
              data: Optional[Path], output: Optional[str] = None,
              select: Optional[Callable[[ScenarioModel], bool]] = None,
              keep: bool = False, strict: bool = False) -> list[ScenarioRun]:
    """Check every file, then run every scenario (those `select` keeps) on `engine`; exits 2
    on bad input (with the diagnostics, as JSON or in `output`'s format when asked) and 3
    when FalkorDB is unavailable (at the .tom line of the statement that failed, if one
    did). Each scenario's graphs are dropped once it is answered unless `keep`; with
    `strict`, warnings are errors. On a terminal, a run over a second shows a progress
    bar."""
    output = "json" if json_output else (output or "text")
    results = check_all(expand(files), quiet_json=output != "text", strict=strict)
    if not all(r.ok for r in results):
        if output == "json":
            emit_json({"diagnostics": diagnostics_json(results)})
        elif output != "text":
            from tomc.cli.formats import emit, from_diagnostic
            errors = sum(1 for r in results for d in r.diagnostics if d.severity == "error")
            emit([from_diagnostic(d) for r in results for d in r.diagnostics], output,
                 f"{errors} error(s) in {len(results)} file(s): nothing was run")
        raise typer.Exit(EXIT_BAD_INPUT)
    scenarios = [s for r in results for s in r.scenarios]
    _distinct_names(scenarios)
    scenarios = [s for s in scenarios if select is None or select(s)]
    return run_models(scenarios, engine, url, data, output, {r.path: r.source for r in results},
                      keep)


def run_models(scenarios: list[ScenarioModel], engine: EngineChoice, url: Optional[str],
               data: Optional[Path], output: str = "text",
               sources: Optional[dict[str, str]] = None,
               keep: bool = False) -> list[ScenarioRun]:
    """Run checked scenarios on `engine`; exits 3 when FalkorDB is unavailable, at the .tom
    line of the statement that failed (`sources` maps a path to its text, to show it).
    Each scenario's graphs are dropped once it is answered unless `keep` (runner.py)."""
    from tomc.cli.terminal import RunProgress
    from tomc.engine import factory as engines
    from tomc.runner import run_scenario
    runs = []
    with contextlib.ExitStack() as stack:
        conn = None
        if engines.stored(engine.value):
            conn = stack.enter_context(database(url, data, output == "json"))
        progress = stack.enter_context(RunProgress(len(scenarios), enabled=output == "text"))
        for scenario in scenarios:
            try:
                runs.append(run_scenario(scenario, engine.value, conn, keep))
            except DatabaseUnavailable as err:
                fail(runtime_error(err, scenario, (sources or {}).get(scenario.path)),
                     EXIT_NO_DATABASE, output == "json")
            progress.advance(scenario.name)
    return runs


def runtime_error(err: DatabaseUnavailable, scenario: ScenarioModel,
                  source: Optional[str]) -> str:
    """A runtime failure at the .tom line of the statement that caused it (the plan's
    source map: `err.origin`), with that line shown as a diagnostic shows it."""
    if not err.origin or not err.origin[0]:
        return f"database unavailable: {err} (scenario {scenario.name}, {scenario.path})"
    line, text = err.origin
    lines = (source or "").split("\n")
    shown = lines[line - 1].rstrip() if 0 < line <= len(lines) else text
    return (f"{scenario.path}:{line}: database unavailable while running `{text}`: {err}\n"
            f"  {line:>4} | {shown}")
