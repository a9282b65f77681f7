"""Entry point of the `tomc` console script: one command per verb module, each imported only
when that command runs (or `--help` lists it), so `tomc --version` or `tomc memory apply`
does not pay for hypothesis, the MCP SDK or pygls (tests/test_startup.py).

Exit codes, for every verb: 0 success (all expectations hold), 1 an expectation failed
(or `fmt --check` found files to reformat), 2 bad input, 3 database unavailable, 4 access
denied (an agent's session: tomc memory --as), 5 nothing was tested (tomc test), 6 a stale
write (tomc memory --after-step).
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
from typing import Iterator, MutableMapping, Optional

import typer
from typer.core import TyperGroup

import tomc

# Command name -> (module, attribute): a function (one command) or a typer.Typer (a group
# of subcommands). `tomc --help` lists them in this order.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("tomc.cli.run_cmd", "run"),
    "check": ("tomc.cli.check_cmd", "check"),
    "compile": ("tomc.cli.compile_cmd", "compile_"),
    "test": ("tomc.cli.test_cmd", "test"),
    "fmt": ("tomc.cli.fmt_cmd", "fmt"),
    "diff": ("tomc.cli.diff_cmd", "diff"),
    "report": ("tomc.cli.report_cmd", "report"),
    "mcp": ("tomc.cli.mcp_cmd", "mcp"),
    "eval": ("tomc.cli.eval_cmd", "eval_"),
    "extract": ("tomc.cli.extract_cmd", "extract"),
    "lsp": ("tomc.cli.lsp_cmd", "lsp"),
    "serve": ("tomc.cli.serve_cmd", "serve"),
    "http": ("tomc.cli.http_cmd", "http"),
    "console": ("tomc.cli.http_cmd", "console"),
    "import": ("tomc.cli.import_cmd", "app"),
    "memory": ("tomc.cli.memory_cmd", "app"),
    "token": ("tomc.cli.token_cmd", "app"),
}

HELP = "Theory-of-mind memory for agent teams: run .tom scenarios on FalkorDB."
MARKUP = "markdown"  # docstring paragraphs are rewrapped, not cut at their line ends
LOG_LEVELS = ("debug", "info", "warning", "error")


def _load(name: str):
    """The click command `name`, built as `app.command`/`app.add_typer` would have built it
    on the root app (same markup mode), from its module imported now."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(rich_markup_mode=MARKUP, add_completion=False,
                         pretty_exceptions_enable=False)
    holder.callback()(_no_options)  # a callback makes `holder` a group, whatever it holds
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_command(holder).commands[name]


def _no_options() -> None:
    """(the holder group of one lazily built command)"""


class _Commands(MutableMapping):
    """The root group's commands: every name of COMMANDS is known, its module imported on
    first access (`get`, `[]`); iterating or `in` imports nothing."""

    def __init__(self, loaded: dict):
        self._loaded = dict(loaded)

    def __getitem__(self, name: str):
        if name not in self._loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            self._loaded[name] = _load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._loaded if name not in COMMANDS)

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._loaded))


class LazyGroup(TyperGroup):
    """The `tomc` group: commands are imported when run, listed (`--help`) or completed."""

    def __init__(self, **attrs):
        super().__init__(**attrs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx) -> list[str]:
        return list(self.commands)  # the names alone: nothing is imported to list them


app = typer.Typer(
    name="tomc",
    help=HELP,
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    pretty_exceptions_enable=False,
    rich_markup_mode=MARKUP,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tomc {tomc.__version__}")
        raise typer.Exit()


def _log_level(verbose: int, level: Optional[str]) -> Optional[int]:
    """--log-level (or $TOMC_LOG) wins; else -v is info, -vv debug; else no logging setup."""
    if level:
        return getattr(logging, level.upper())
    if verbose:
        return logging.DEBUG if verbose > 1 else logging.INFO
    return None


def _check_level(value: Optional[str]) -> Optional[str]:
    if value is not None and value.lower() not in LOG_LEVELS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(LOG_LEVELS)}")
    return value and value.lower()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version,
                                          is_eager=True, help="Print the version and exit."),
             verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False,
                                         help="Log what tomc does on stderr: -v the steps "
                                              "(server start, connection), -vv also every "
                                              "statement sent."),
             log_level: Optional[str] = typer.Option(
                 None, "--log-level", envvar="TOMC_LOG", callback=_check_level,
                 metavar="LEVEL", help="Log level on stderr: debug, info, warning or error "
                                       "(default: warnings only)."),
             timeout: Optional[float] = typer.Option(
                 None, "--timeout", min=0.1, metavar="SECONDS",
                 help="Give up on a FalkorDB statement unanswered after SECONDS (exit 3). "
                      "Default: $TOMC_TIMEOUT, else 15 for memory, token and mcp commands, "
                      "120 for scenario runs, `tomc http`/`console`, and a write waiting for "
                      "the applier of `tomc serve`.")) -> None:
    """Theory-of-mind memory for agent teams: run .tom scenarios on FalkorDB."""
    if timeout is not None:  # read where each connection is made (statement_timeout)
        os.environ["TOMC_TIMEOUT"] = str(timeout)
    level = _log_level(verbose, log_level)
    if level is not None:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                            format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s: "
                                   "%(message)s", datefmt="%H:%M:%S")
        logging.getLogger("tomc").setLevel(level)


def main() -> None:
    """Run the CLI (the `tomc` console script)."""
    # SIGTERM unwinds like Ctrl-C, so the embedded FalkorDB is shut down, not orphaned.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    from tomc.cli.terminal import guard_stdout  # stored text never drives the terminal
    guard_stdout()
    try:
        app()
    except SystemExit as done:
        if done.code != 128 + signal.SIGTERM:
            raise
        # Unwound: every server is stopped. Exit now, not once threads blocked in a read
        # return (the MCP SDK reads stdin in a worker thread until its client closes it).
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:  # the reader is gone (a client that closed its end)
                pass
        os._exit(done.code)
