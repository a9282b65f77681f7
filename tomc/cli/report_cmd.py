"""`tomc report FILE [-o report.html]`: one self-contained HTML page that shows a run
(tomc/review/html.py)."""

from __future__ import annotations

from contextlib import nullcontext

from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (DATA_OPTION, DB_OPTION, ENGINE_OPTION, EXIT_BAD_INPUT,
                             EXIT_FAILED, EXIT_OK, JSON_OPTION, EngineChoice, check_all,
                             database, diagnostics_json, emit_json, fail)
from tomc.engine import factory as engines
from tomc.review.html import render_page, report_data
from tomc.runner import run_scenario


def report(file: Path = typer.Argument(..., help="A .tom file with scenarios."),
           output: Optional[Path] = typer.Option(
               None, "-o", "--output",
               help="The HTML file to write (default: FILE's name with .html, in the "
                    "current folder)."),
           engine: EngineChoice = ENGINE_OPTION,
           db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    """Run the scenarios of FILE and write one self-contained HTML page (inline CSS, no
    script, no network) to look at: a timeline of events with who witnessed each, per key
    each chain's belief at every step (false beliefs and contested values marked), the
    answers to every expect and ask with provenance and explain paths, and the history of
    claims with sources and both clocks. Exit 0 when every expectation holds, 1 when one
    fails (the page is written either way), 2 on bad input, 3 if FalkorDB is unavailable."""
    results = check_all([file], quiet_json=json_output)
    if not results[0].ok:
        if json_output:
            emit_json({"diagnostics": diagnostics_json(results)})
        raise typer.Exit(EXIT_BAD_INPUT)
    target = output or Path(file.name).with_suffix(".html")
    if target.exists() and target.is_dir():
        fail(f"{target} is a folder: name an .html file with -o", EXIT_BAD_INPUT, json_output)
    scenarios = results[0].scenarios
    connection = database(db, data, json_output) if engines.stored(engine.value) \
        else nullcontext(None)
    with connection as conn:
        # Each run is read before the next one starts.
        pages = [report_data(run_scenario(s, engine.value, conn), engine.value)
                 for s in scenarios]
    try:
        target.write_text(render_page(str(file), engine.value, pages), encoding="utf-8")
    except OSError as err:
        fail(f"cannot write {target}: {err.strerror}", EXIT_BAD_INPUT, json_output)
    failed = sum(p["failed"] for p in pages)
    if json_output:
        emit_json({"written": str(target), "scenarios": [
            {"name": p["scenario"], "passed": p["passed"], "failed": p["failed"]}
            for p in pages]})
    else:
        typer.echo(f"wrote {target} ({len(pages)} scenario(s), "
                   f"{sum(p['passed'] for p in pages)} passed, {failed} failed)")
    raise typer.Exit(EXIT_FAILED if failed else EXIT_OK)
