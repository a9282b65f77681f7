"""Optional extras (pyproject.toml): the commands that need one import it when they run, and
say how to install it when it is missing, instead of failing with a traceback.

    with needs_extra("mcp", "tomc mcp"):
        from tomc.mcp.server import memory_server, serve
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import typer

# extra -> the top-level modules of the packages it installs (as `import` names them)
EXTRAS = {
    "mcp": ("mcp", "mcp_types"),
    "lsp": ("pygls", "lsprotocol"),
    "review": ("hypothesis",),
    "web": ("fastapi", "uvicorn", "starlette"),
}
EXIT_BAD_INPUT = 2


@contextmanager
def needs_extra(extra: str, command: str) -> Iterator[None]:
    """Run the block (its imports); if a package of `extra` is missing, print
    `tomc: 'COMMAND' needs the EXTRA extra: pip install 'tomc[EXTRA]'` and exit 2."""
    try:
        yield
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in EXTRAS[extra]:
            raise
        typer.echo(missing(extra, command, err.name), err=True)
        raise typer.Exit(EXIT_BAD_INPUT)


def missing(extra: str, command: str, module: str) -> str:
    """The line printed when `command` cannot import `module`, a package of `extra`."""
    return (f"tomc: '{command}' needs the {extra} extra: pip install 'tomc[{extra}]' "
            f"({module} is not installed)")
