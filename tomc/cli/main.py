"""Entry point of the `tomc` console script: registers one command per verb module.

Exit codes, for every verb: 0 success (all expectations hold), 1 an expectation failed
(or `fmt --check` found files to reformat), 2 bad input, 3 database unavailable, 4 access
denied (an agent's session: tomc memory --as), 5 nothing was tested (tomc test), 6 a stale
write (tomc memory --after-step).
"""

from __future__ import annotations

import signal
import sys

import typer

from tomc import __version__
from tomc.cli import (check_cmd, compile_cmd, diff_cmd, eval_cmd, extract_cmd, fmt_cmd,
                      import_cmd,
                      lsp_cmd, mcp_cmd, memory_cmd, report_cmd, run_cmd, serve_cmd,
                      test_cmd)

app = typer.Typer(
    name="tomc",
    help="Theory-of-mind memory for agent teams: run .tom scenarios on FalkorDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstring paragraphs are rewrapped, not cut at their line ends
)
app.command("run")(run_cmd.run)
app.command("check")(check_cmd.check)
app.command("compile")(compile_cmd.compile_)
app.command("test")(test_cmd.test)
app.command("fmt")(fmt_cmd.fmt)
app.command("diff")(diff_cmd.diff)
app.command("report")(report_cmd.report)
app.command("mcp")(mcp_cmd.mcp)
app.command("eval")(eval_cmd.eval_)
app.command("lsp")(lsp_cmd.lsp)
app.command("extract")(extract_cmd.extract)
import_app = typer.Typer(help="Turn benchmark data into .tom files.", no_args_is_help=True)
import_app.command("hitom")(import_cmd.hitom)
app.add_typer(import_app, name="import")
app.add_typer(memory_cmd.app, name="memory")
app.command("serve")(serve_cmd.serve)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tomc {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version,
                                          is_eager=True, help="Print the version and exit.")):
    """Theory-of-mind memory for agent teams: run .tom scenarios on FalkorDB."""


def main() -> None:
    """Run the CLI (the `tomc` console script)."""
    # SIGTERM unwinds like Ctrl-C, so the embedded FalkorDB is shut down, not orphaned.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    app()
