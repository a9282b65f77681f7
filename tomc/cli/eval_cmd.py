"""`tomc eval FILE 'ask ...'`: answer a question against a scenario without editing its file."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_BAD_INPUT,
                             EXIT_FAILED, EXIT_OK, JSON_OPTION, EngineChoice, check_all,
                             diagnostics_json, emit_json, fail, run_models)
from tomc.cli.report import render_run
from tomc.dsl import ast
from tomc.dsl.ast import Span
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.memory.environment import Environment

QUESTIONS = (ast.Ask, ast.AskAnalysis, ast.Expect, ast.ExpectAnalysis, ast.AskReady,
             ast.ExpectReady)


def eval_(file: Path = typer.Argument(..., help="A .tom file with the scenario."),
          question: str = typer.Argument(..., help="One or more `ask` or `expect` statements "
                                         "(one per line), e.g. 'ask Sally believes marble'."),
          scenario: Optional[str] = typer.Option(None, "--scenario", "-s", help="The scenario "
                                                 "to ask, when FILE holds more than one."),
          db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          json_output: bool = JSON_OPTION, engine: EngineChoice = ENGINE_OPTION) -> None:
    """Answer `ask` (or check `expect`) statements against a scenario as of its last event,
    without editing the file; the file's own asks and expects are not run. Exit 0 if every
    expectation given holds, 1 if one fails, 2 on bad input, 3 if FalkorDB is unavailable."""
    results = check_all([file], quiet_json=json_output)
    if not results[0].ok:
        if json_output:
            emit_json({"diagnostics": diagnostics_json(results)})
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        live = Environment.checker(results[0].source, str(file), scenario)
    except ValueError as err:  # not one scenario
        fail(f"{err}" + ("; name one with --scenario" if "must hold one" in str(err) else ""),
             EXIT_BAD_INPUT, json_output)
    try:
        try:
            _, queries = live.add_text(question, QUESTIONS, "<question>")
        except ValueError:  # a statement that is not a question
            first = question.strip().split("\n")[0]
            shown = f"not `{first}`" if first else "and got none"
            raise DiagnosticError([Diagnostic(
                "E144", f"tomc eval answers `ask` and `expect` statements, {shown}",
                Span(line=1, column=1, end_line=1, end_column=max(len(first), 1)),
                "<question>", hint="events belong in the file; ask e.g. "
                                   "'ask Sally believes marble'")]) from None
    except DiagnosticError as err:
        if json_output:
            emit_json({"diagnostics": [d.to_json() for d in err.diagnostics]})
        else:
            for diagnostic in err.diagnostics:
                typer.echo(diagnostic.render(question), err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    model = dataclasses.replace(live.scenario, queries=queries)
    (run,) = run_models([model], engine, db, data, "json" if json_output else "text",
                        {model.path: results[0].source})
    if json_output:
        emit_json({"scenario": model.name, "path": model.path,
                   "answers": [a.to_json() for a in run.answers]})
    else:
        typer.echo("\n".join(render_run(run).splitlines()[1:]))
    raise typer.Exit(EXIT_FAILED if run.failed else EXIT_OK)
