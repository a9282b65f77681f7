"""`tomc run FILE...`: execute scenarios, print every ask with provenance and every expect."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_FAILED, EXIT_OK,
                             JSON_OPTION, KEEP_OPTION, STRICT_OPTION, EngineChoice, emit_json, run_files)
from tomc.cli.report import render_run, summary_line

def run(files: list[Path] = typer.Argument(..., help=".tom files with scenarios (a folder "
                                           "means every .tom file below it)."),
        db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
        json_output: bool = JSON_OPTION, engine: EngineChoice = ENGINE_OPTION,
        keep_graphs: bool = KEEP_OPTION, strict: bool = STRICT_OPTION) -> None:
    """Run scenarios: print each `ask` answer with its provenance and each `expect` as
    PASS/FAIL. Exit 0 if every expectation holds, 1 if one fails, 2 on bad input, 3 if
    FalkorDB is unavailable."""
    runs = run_files(files, json_output, engine, db, data, keep=keep_graphs, strict=strict)
    if json_output:
        emit_json({"scenarios": [{"name": r.scenario.name, "path": r.scenario.path,
                                  "policy": r.scenario.policy.name,
                                  "answers": [a.to_json() for a in r.answers]} for r in runs],
                   "summary": summary_line(runs)})
    else:
        for r in runs:
            typer.echo(render_run(r))
        typer.echo(summary_line(runs))
    raise typer.Exit(EXIT_FAILED if any(r.failed for r in runs) else EXIT_OK)
