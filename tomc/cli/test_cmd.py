"""`tomc test PATH...`: every scenario under PATH as a test suite; expectations are the tests."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_BAD_INPUT,
                             EXIT_FAILED, EXIT_OK, JSON_OPTION, EngineChoice, emit_json,
                             run_files)
from tomc.cli.report import render_run, summary_line
from tomc.runner import ScenarioRun


def _xml_text(text: str) -> str:
    """`text` with U+FFFD for each character XML 1.0 cannot hold (control characters,
    lone surrogates, U+FFFE, U+FFFF), which names may contain."""
    def allowed(c: str) -> bool:
        code = ord(c)
        return c in "\t\n\r" or (code >= 32 and not 0xD800 <= code <= 0xDFFF
                                   and code not in (0xFFFE, 0xFFFF))
    return "".join(c if allowed(c) else "\ufffd" for c in text)


def _junit(runs: list[ScenarioRun], path: Path) -> None:
    """Write the JUnit XML report; an unwritable path is bad input (exit 2)."""
    suites = ET.Element("testsuites", name="tomc")
    for run in runs:
        expects = [a for a in run.answers if a.passed is not None]
        suite = ET.SubElement(suites, "testsuite", name=_xml_text(run.scenario.name),
                              file=_xml_text(run.scenario.path), tests=str(len(expects)),
                              failures=str(sum(1 for a in expects if not a.passed)))
        for answer in expects:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(run.scenario.name),
                                 name=_xml_text(f"line {answer.query.line}: {answer.query.text}"))
            if not answer.passed:
                failure = ET.SubElement(case, "failure",
                                        message=_xml_text(f"actual: {answer.shown}"))
                failure.text = _xml_text(f"{run.scenario.path}:{answer.query.line}: "
                                         f"actual {answer.shown}")
    try:
        ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as err:
        typer.echo(f"tomc: cannot write the JUnit report {path}: {err.strerror}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None


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
