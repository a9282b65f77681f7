"""`tomc test PATH...`: every scenario under PATH as a test suite; expectations are the tests."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_BAD_INPUT,
                             EXIT_FAILED, EXIT_OK, JSON_OPTION, KEEP_OPTION, STRICT_OPTION,
                             EngineChoice, emit_json, run_files)
from tomc.cli.formats import (EXPECT_RULE, FORMAT_OPTION, Finding, OutputFormat, emit,
                              junit_tree)
from tomc.cli.report import render_run, summary_line
from tomc.cli.terminal import paint
from tomc.dsl.program import ScenarioModel
from tomc.runner import ScenarioRun

EXIT_NO_TESTS = 5  # as pytest: the run collected no expectation


def _matches(pattern: Optional[str], *texts: str) -> bool:
    """`-k`: a case-insensitive substring of the scenario name or the expectation text."""
    return pattern is None or any(pattern.lower() in t.lower() for t in texts)


def _selected(run: ScenarioRun, pattern: Optional[str]) -> ScenarioRun:
    """The run with only the expectations `-k` selects (all of them when the scenario's
    name matches); asks are kept (they are not tests)."""
    if _matches(pattern, run.scenario.name):
        return run
    kept = [a for a in run.answers if a.passed is None or _matches(pattern, a.query.text)]
    return dataclasses.replace(run, answers=kept)


def _wanted(pattern: Optional[str]):
    """Whether a scenario has anything `-k` selects (the others are not run at all)."""
    def wanted(scenario: ScenarioModel) -> bool:
        return _matches(pattern, scenario.name) or any(
            q.kind == "expect" and _matches(pattern, q.text) for q in scenario.queries)
    return wanted


def _findings(runs: list[ScenarioRun]) -> list[Finding]:
    """Every expectation as a finding at its .tom line, grouped by scenario."""
    out = []
    for run in runs:
        for a in run.answers:
            if a.passed is None:
                continue
            span = getattr(a.query, "span", None)
            out.append(Finding(run.scenario.path, a.query.line, span.column if span else 1,
                               EXPECT_RULE,
                               a.query.text if a.passed else f"{a.query.text}: does not hold",
                               group=run.scenario.name, failed=not a.passed,
                               name=f"line {a.query.line}: {a.query.text}",
                               detail=None if a.passed else f"actual: {a.shown}"))
    return out


def _junit(runs: list[ScenarioRun], path: Path) -> None:
    """Write the JUnit XML report; an unwritable path is bad input (exit 2)."""
    tree = junit_tree(_findings(runs), {r.scenario.name: r.scenario.path for r in runs})
    try:
        ET.ElementTree(tree).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as err:
        typer.echo(f"tomc: cannot write the JUnit report {path}: {err.strerror}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None


def test(paths: list[Path] = typer.Argument(..., help=".tom files or folders holding them."),
         junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML report."),
         db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
         json_output: bool = JSON_OPTION, engine: EngineChoice = ENGINE_OPTION,
         verbose: bool = typer.Option(False, "-v", "--verbose", help="Print every answer."),
         pattern: Optional[str] = typer.Option(
             None, "-k", metavar="PATTERN",
             help="Only the scenarios whose name, or the expectations whose text, contains "
                  "PATTERN (case-insensitive)."),
         output: OutputFormat = FORMAT_OPTION, keep_graphs: bool = KEEP_OPTION,
         strict: bool = STRICT_OPTION) -> None:
    """Run every scenario found under PATH; each `expect` is a test. Ends with
    `N passed, N failed`. Exit 0 if all pass, 1 if any fails, 2 on bad input, 3 if FalkorDB
    is unavailable, 5 if nothing was tested (no `expect`, or none selected by `-k`)."""
    if json_output:
        output = OutputFormat.json
    runs = run_files(paths, False, engine, db, data, output.value, select=_wanted(pattern),
                     keep=keep_graphs, strict=strict)
    runs = [_selected(r, pattern) for r in runs]
    tested = sum(1 for r in runs for a in r.answers if a.passed is not None)
    if junit:
        _junit(runs, junit)
    if output == OutputFormat.json:
        emit_json({"scenarios": [{"name": r.scenario.name, "path": r.scenario.path,
                                  "passed": sum(1 for a in r.answers if a.passed is True),
                                  "failed": [a.to_json() for a in r.failed]} for r in runs],
                   "summary": summary_line(runs), "tested": tested})
    elif output != OutputFormat.text:
        emit(_findings(runs), output, summary_line(runs))
    else:
        for r in runs:
            if verbose or r.failed:
                typer.echo(render_run(r))
            else:
                count = sum(1 for a in r.answers if a.passed)
                typer.echo(f"{paint('ok', 'green')}   {r.scenario.name} ({r.scenario.path}): "
                           f"{count} expectations")
        typer.echo(summary_line(runs))
    if not tested:
        why = (f"no expectation selected by -k {pattern!r}" if pattern else
               "no `expect` statement (`tomc run` answers the asks)")
        typer.echo(f"tomc: nothing was tested: {why}", err=True)
        raise typer.Exit(EXIT_NO_TESTS)
    raise typer.Exit(EXIT_FAILED if any(r.failed for r in runs) else EXIT_OK)
