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
    `tomc: 'COMMAND' needs the EXTRA extra: pip install 'tomc[EXTRA]'` and exit 2; if the
    package is there but lacks the module (a version older than the extra asks for), say
    that instead."""
    try:
        yield
    except ModuleNotFoundError as err:
        import importlib.util

        top = (err.name or "").split(".")[0]
        if top not in EXTRAS[extra]:
            raise
        installed = err.name != top and importlib.util.find_spec(top) is not None
        typer.echo(too_old(extra, command, err.name) if installed
                   else missing(extra, command, err.name), err=True)
        raise typer.Exit(EXIT_BAD_INPUT)


def missing(extra: str, command: str, module: str) -> str:
    """The line printed when `command` cannot import `module`, a package of `extra`."""
    return (f"tomc: '{command}' needs the {extra} extra: pip install 'tomc[{extra}]' "
            f"({module} is not installed)")


def too_old(extra: str, command: str, module: str) -> str:
    """The line printed when `command` cannot import `module` from a package of `extra`
    that is installed: a version without it."""
    import importlib.metadata

    top = module.split(".")[0]
    try:
        version = importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        version = "of another version"
    return (f"tomc: '{command}' needs a newer {top} than the {version} installed ({module} is "
            f"not in it): pip install --upgrade 'tomc[{extra}]'")
