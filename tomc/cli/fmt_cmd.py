"""`tomc fmt FILE...`: rewrite .tom files in canonical form; `--check` for CI."""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

import typer

from tomc.cli.common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, JSON_OPTION, emit_json,
                             expand)
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse, read_source


FILES_ARGUMENT = typer.Argument(..., metavar="FILE", help=".tom files to format (a folder "
                                "means every .tom file below it).")
CHECK_OPTION = typer.Option(False, "--check", help="Write nothing; list the files that would "
                            "change and exit 1 if there are any.")
DIFF_OPTION = typer.Option(False, "--diff", help="Write nothing; print a unified diff of the "
                           "changes on stdout (exit 1 if there are any, as --check).")


def fmt(files: list[Path] = FILES_ARGUMENT, check: bool = CHECK_OPTION,
        json_output: bool = JSON_OPTION, diff: bool = DIFF_OPTION) -> None:
    """Rewrite .tom files in canonical form, in place; comments are kept (a trailing
    comment stays on its line, aligned with its neighbours).

    One statement per line, two-space indentation, names quoted only where needed.
    A file with syntax errors is left as it is; its diagnostics go to stderr.
    Exit 0: done, or nothing to change. Exit 1: --check or --diff found files to change.
    Exit 2: a file could not be read, parsed or written.
    """
    check = check or diff
    statuses: dict[str, str] = {}
    diffs: list[str] = []
    diagnostics: list[Diagnostic] = []
    for path in expand(files):
        source = None
        try:
            source = read_source(path)
            statuses[str(path)] = _reformat(path, source, write=not check)
            if diff and statuses[str(path)] != "unchanged":
                diffs.append(_diff(path, source))
        except DiagnosticError as err:
            statuses[str(path)] = "failed"
            diagnostics += err.diagnostics
            if not json_output:
                for diagnostic in err.diagnostics:
                    typer.echo(diagnostic.render(source), err=True)
    changed = [p for p, s in statuses.items() if s in ("reformatted", "would be reformatted")]
    if json_output:
        emit_json({"ok": not diagnostics and not (check and changed),
                   "files": [{"path": p, "status": s} for p, s in statuses.items()],
                   "diagnostics": [d.to_json() for d in diagnostics]})
    elif diff:
        typer.echo("".join(diffs), nl=False)
    else:
        for path in changed:
            typer.echo(f"{statuses[path]}: {path}")
        typer.echo(_summary(statuses), err=True)
    if diagnostics:
        raise typer.Exit(EXIT_BAD_INPUT)
    raise typer.Exit(EXIT_FAILED if check and changed else EXIT_OK)


def _reformat(path: Path, source: str, write: bool) -> str:
    """Format one file's source; its status: unchanged, reformatted or would be reformatted."""
    formatted = format_file(parse(source, str(path)))
    if formatted == source:
        return "unchanged"
    if not write:
        return "would be reformatted"
    try:
        path.write_bytes(formatted.encode("utf-8"))
    except OSError as err:
        raise DiagnosticError([Diagnostic("E002", f"cannot write file: {err.strerror}", None,
                                          str(path))]) from None
    return "reformatted"


def _diff(path: Path, source: str) -> str:
    """The unified diff from `source` to its canonical form, as `diff -u` prints it."""
    formatted = format_file(parse(source, str(path)))
    return "".join(difflib.unified_diff(source.splitlines(keepends=True),
                                        formatted.splitlines(keepends=True),
                                        f"{path}", f"{path} (formatted)"))


def _summary(statuses: dict[str, str]) -> str:
    counts = Counter(statuses.values())
    order = ("reformatted", "would be reformatted", "unchanged", "failed")
    return ", ".join(f"{counts[s]} file(s) {s}" for s in order if counts[s]) or "no .tom files"
