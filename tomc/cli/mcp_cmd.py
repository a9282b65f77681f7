"""`tomc mcp --memory NAME [--agent A] [--http PORT [--host H] [--allowed-host NAME]]`: serve a
named memory over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (ALLOWED_HOST_OPTION, DATA_OPTION, DB_OPTION, EXIT_BAD_INPUT,
                             EXIT_NO_DATABASE, HOST_OPTION, WAIT_OPTION, answered_hosts, fail,
                             with_options)
from tomc.cli.extras import needs_extra
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable

EXIT_ACCESS_DENIED = 4


def mcp(memory: str = typer.Option(..., "--memory", "-m",
                                   help="The named memory to serve (it must exist, unless "
                                        "--create)."),
        create: bool = typer.Option(
            False, "--create", help="Supervisor mode: create the memory if there is none "
                                    "(with --policy, or the default policy)."),
        agent: Optional[str] = typer.Option(
            None, "--agent", help="Agent mode: only this agent's mind, through its read-only "
                                  "FalkorDB user, and tell/say as this agent."),
        policy: Optional[str] = typer.Option(
            None, "--policy", help="Policy of a memory created now (a shipped name or a .tom "
                                   "file; default: default). Given for an existing memory, "
                                   "it must be the memory's."),
        http: Optional[int] = typer.Option(
            None, "--http", min=1, max=65535,
            help="Serve streamable HTTP on http://HOST:PORT/mcp instead of stdio; every "
                 "request needs `Authorization: Bearer <token>` with a token of this memory "
                 "and mode (`tomc token issue NAME [--agent A]`)."),
        host: str = HOST_OPTION, allowed_host: Optional[list[str]] = ALLOWED_HOST_OPTION,
        calls: int = typer.Option(
            4, "--calls", min=1, max=64,
            help="How many tool calls to answer at once, each on a session of its own "
                 "(attached when first needed)."),
        db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
        wait_replicas: int = WAIT_OPTION) -> None:
    """Serve a named memory over the Model Context Protocol (stdio by default), for MCP
    clients such as Claude Code, Claude Desktop, Cursor or an agent framework.

    Supervisor mode (no --agent): record events and ask every question. Agent mode: what
    the agent may know, and speech as that agent. Several servers and the CLI may share
    one memory through a FalkorDB server (--db); the embedded FalkorDB serves one process.
    A memory that does not exist is refused (exit 2), naming where it was looked for (a
    client that starts the server without TOMC_DATA looks in the default folder), unless
    --create. Exit 2 on bad input (no such memory or agent, wrong policy), 3 if FalkorDB is
    unavailable."""
    from tomc.api import TomError
    with needs_extra("mcp", "tomc mcp"):  # the MCP SDK loads only for this verb
        from tomc.mcp.server import memory_server, serve

    if http is None and (host != HOST_OPTION.default or allowed_host):
        fail("--host and --allowed-host are for --http PORT (stdio listens nowhere)",
             EXIT_BAD_INPUT)
    db = with_options(db, wait_replicas, False)  # no --stale-reads: an agent reads its own tells
    if db and data:
        fail(f"--data {data} is for the embedded FalkorDB, but a server is named ({db}, from "
             "--db or FALKORDB_URL); drop one of them", EXIT_BAD_INPUT)
    try:
        with memory_server(memory, db=db, data_dir=data, policy=policy, agent=agent,
                           calls=calls, create=create) as server:
            if http is not None:
                typer.echo(f"tomc: serving memory {memory!r} on http://{host}:{http}/mcp",
                           err=True)
            serve(server, http, host, answered_hosts(host, allowed_host))
    except TomError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    except LookupError as err:
        fail(f"{err.args[0] if err.args else err} ("
             + ("agent mode does not create memories: create it with the CLI or API, or a "
                "supervisor's `tomc mcp --create`)" if agent is not None else
                "give --create to make it, or --db/--data for where it is kept)"),
             EXIT_BAD_INPUT)
    except DatabaseUnavailable as err:
        fail(f"database unavailable: {err}", EXIT_NO_DATABASE)
    except AccessDenied as err:
        fail(f"access denied: {err}", EXIT_ACCESS_DENIED)
