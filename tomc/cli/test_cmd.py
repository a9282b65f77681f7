"""`tomc test PATH...`: every scenario under PATH as a test suite; expectations are the tests."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_FAILED, EXIT_OK,
                             JSON_OPTION, EngineChoice, emit_json, run_files)
from tomc.cli.report import render_run, summary_line
from tomc.runner import ScenarioRun


def _junit(runs: list[ScenarioRun], path: Path) -> None:
    suites = ET.Element("testsuites", name="tomc")
    for run in runs:
        expects = [a for a in run.answers if a.passed is not None]
        suite = ET.SubElement(suites, "testsuite", name=run.scenario.name,
                              file=run.scenario.path, tests=str(len(expects)),
                              failures=str(sum(1 for a in expects if not a.passed)))
        for answer in expects:
            case = ET.SubElement(suite, "testcase", classname=run.scenario.name,
                                 name=f"line {answer.query.line}: {answer.query.text}")
            if not answer.passed:
                failure = ET.SubElement(case, "failure", message=f"actual: {answer.shown}")
                failure.text = f"{run.scenario.path}:{answer.query.line}: actual {answer.shown}"
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def test(paths: list[Path] = typer.Argument(..., help=".tom files or folders holding them."),
         junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML report."),
         db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
         json_output: bool = JSON_OPTION, engine: EngineChoice = ENGINE_OPTION,
         verbose: bool = typer.Option(False, "-v", "--verbose", help="Print every answer.")) -> None:
    """Run every scenario found under PATH; each `expect` is a test. Ends with
    `N passed, N failed`. Exit 0 if all pass, 1 if any fails, 2 on bad input, 3 if FalkorDB
    is unavailable."""
    runs = run_files(paths, json_output, engine, db, data)
    if junit:
        _junit(runs, junit)
    if json_output:
        emit_json({"scenarios": [{"name": r.scenario.name, "path": r.scenario.path,
                                  "passed": sum(1 for a in r.answers if a.passed is True),
                                  "failed": [a.to_json() for a in r.failed]} for r in runs],
                   "summary": summary_line(runs)})
    else:
        for r in runs:
            if verbose or r.failed:
                typer.echo(render_run(r))
            else:
                count = sum(1 for a in r.answers if a.passed)
                typer.echo(f"ok   {r.scenario.name} ({r.scenario.path}): {count} expectations")
        typer.echo(summary_line(runs))
    raise typer.Exit(EXIT_FAILED if any(r.failed for r in runs) else EXIT_OK)
