"""`tomc check FILE...`: parse and validate only."""

from __future__ import annotations

from pathlib import Path

import typer

from tomc.cli.common import (EXIT_BAD_INPUT, EXIT_OK, JSON_OPTION, STRICT_OPTION, check_all,
                             diagnostics_json, emit_json, expand)
from tomc.cli.formats import FORMAT_OPTION, Finding, OutputFormat, emit, from_diagnostic


def check(files: list[Path] = typer.Argument(..., help=".tom files to check (a folder means "
                                             "every .tom file below it)."),
          json_output: bool = JSON_OPTION, output: OutputFormat = FORMAT_OPTION,
          strict: bool = STRICT_OPTION) -> None:
    """Parse and check files without running them. Diagnostics read
    `file:line:col: error[CODE]: message` (codes: docs/diagnostics.md). Exit 0 if all
    files are valid (warnings allowed, unless `--strict`), 2 otherwise."""
    if json_output:
        output = OutputFormat.json
    results = check_all(expand(files), quiet_json=output != OutputFormat.text,
                        strict=strict)
    ok = all(r.ok for r in results)
    if output == OutputFormat.json:
        emit_json({"ok": ok, "files": [{"path": r.path, "ok": r.ok,
                                        "scenarios": [s.name for s in r.scenarios]}
                                       for r in results],
                   "diagnostics": diagnostics_json(results)})
    elif output != OutputFormat.text:
        checked = [Finding(r.path, 1, 1, "check", "valid", group=r.path, failed=False,
                           name="check") for r in results if r.ok]  # JUnit lists passes too
        errors = sum(1 for r in results for d in r.diagnostics if d.severity == "error")
        emit([from_diagnostic(d) for r in results for d in r.diagnostics] + checked, output,
             f"{len(results)} file(s) checked, {errors} error(s)")
    elif ok:
        count = sum(len(r.scenarios) for r in results)
        typer.echo(f"ok: {len(results)} file(s), {count} scenario(s)")
    raise typer.Exit(EXIT_OK if ok else EXIT_BAD_INPUT)
