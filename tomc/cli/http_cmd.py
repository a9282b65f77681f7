"""`tomc http --memory NAME [--create] | --all [--port N]`: the HTTP API and live console of
named memories; `tomc console --memory NAME [--agent A] [--create]`: the same server, with a
token of its own for one person's browser (tomc/web/; docs/http.md, docs/console.md)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

import typer

from tomc.cli.common import (
    ALLOWED_HOST_OPTION,
    DATA_OPTION,
    DB_OPTION,
    EXIT_BAD_INPUT,
    EXIT_OK,
    HOST_OPTION,
    answered_hosts,
    database,
    fail,
)
from tomc.cli.extras import needs_extra
from tomc.memory import catalog as memories
from tomc.runtime.connection import Database

PORT_OPTION = typer.Option(8780, "--port", min=1, max=65535, help="Port to listen on.")
# A console's token lapses this long after the console last renewed it (kill -9).
CONSOLE_TOKEN_S = 60.0
CREATE_OPTION = typer.Option(False, "--create",
                             help="Create a memory named that does not exist (default policy).")


def http(memory: Optional[list[str]] = typer.Option(
             None, "--memory", "-m", help="A memory to serve (repeat for several; it must "
                                          "exist, unless --create)."),
         every: bool = typer.Option(False, "--all", help="Serve every memory on the server, "
                                                         "those created later too."),
         create: bool = CREATE_OPTION, port: int = PORT_OPTION, host: str = HOST_OPTION,
         allowed_host: Optional[list[str]] = ALLOWED_HOST_OPTION,
         db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION) -> None:
    """Serve named memories as JSON over HTTP (`/memories/NAME/...`, OpenAPI schema at
    `/openapi.json`) and a live console per memory (`/memories/NAME/console`), until Ctrl-C
    or SIGTERM.

    Every request needs a token from `tomc token issue NAME [--agent A]`: a supervisor token
    records events and asks everything; an agent token reads only that agent's mind. A
    memory that does not exist is refused, naming where it was looked for, unless --create.
    Exit 2 on bad input (no memory named, or one that does not exist; the port in use), 3
    if FalkorDB is unavailable."""
    if every == bool(memory):
        fail("name the memories to serve (--memory NAME, repeatable) or give --all",
             EXIT_BAD_INPUT)
    if every and create:
        fail("--create makes the memories named with --memory; --all serves those there are",
             EXIT_BAD_INPUT)
    web = _web("tomc http")
    with database(db, data) as conn:
        _exist(conn, memory or [], create)
        served = "every memory" if every else ", ".join(memory or [])
        _serve(conn, web, None if every else memory, host, port,
               f"tomc: serving {served} on http://{host}:{port}/memories/NAME (console: "
               "/memories/NAME/console?access_token=TOKEN); Ctrl-C or SIGTERM stops",
               allowed_hosts=allowed_host)
    typer.echo("tomc: stopped", err=True)
    raise typer.Exit(EXIT_OK)


def console(memory: str = typer.Option(..., "--memory", "-m", help="The memory to watch."),
            agent: Optional[str] = typer.Option(
                None, "--agent", help="Show only this agent's mind (its read-only view)."),
            create: bool = CREATE_OPTION, port: int = PORT_OPTION, host: str = HOST_OPTION,
            allowed_host: Optional[list[str]] = ALLOWED_HOST_OPTION,
            db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION) -> None:
    """Watch memory NAME live in a browser: serve it as `tomc http --memory NAME` does, with
    a token issued for this session only (revoked when it stops), and print the console's
    URL. The page follows every writer and replays any past step (docs/console.md). A
    memory that does not exist is refused, naming where it was looked for, unless --create.
    Exit 2 on bad input (no such memory or agent; the port in use), 3 if FalkorDB is
    unavailable."""
    from tomc.runtime import tokens

    web = _web("tomc console")  # before a token is issued: nothing to revoke if it fails
    with database(db, data) as conn:
        _exist(conn, [memory], create)
        if agent is not None and agent not in memories.agents(conn, memory):
            fail(f"memory {memory!r} has no agent {agent!r}", EXIT_BAD_INPUT)
        # The token lapses CONSOLE_TOKEN_S after the console last renewed it: a console
        # killed (kill -9) before it could revoke it leaves no token that works for long.
        secret = tokens.issue(conn, memory, agent, lasts_s=CONSOLE_TOKEN_S)
        token_id = secret.split("_")[1]
        try:
            _serve(conn, web, [memory], host, port,
                   f"tomc: the console of memory {memory}"
                   f"{f' as {agent}' if agent else ''}: http://{host}:{port}/memories/"
                   f"{memory}/console?access_token={secret} (this token is revoked when "
                   "the console stops); Ctrl-C or SIGTERM stops",
                   every=(CONSOLE_TOKEN_S / 3, lambda: _renew(conn, token_id)),
                   allowed_hosts=allowed_host)
        finally:
            tokens.revoke(conn, token_id)
    typer.echo("tomc: stopped", err=True)
    raise typer.Exit(EXIT_OK)


def _renew(conn: Database, token_id: str) -> None:
    """Renew the console's token; a server that does not answer now is asked again at the
    next renewal (the token lasts three of them)."""
    from tomc.runtime import tokens
    from tomc.runtime.errors import DatabaseUnavailable
    try:
        tokens.renew(conn, token_id)
    except DatabaseUnavailable as err:
        typer.echo(f"tomc: could not renew the console's token ({err}); trying again",
                   err=True)


def _exist(conn: Database, names: Sequence[str], create: bool) -> None:
    """Each memory named exists, or is made now with the default policy when `create`. A
    missing one is bad input, naming the database looked in: a typo, or a server started
    without the --data or TOMC_DATA meant, must not serve an empty memory."""
    for name in names:
        if memories.read(conn, name) is not None:
            continue
        if not create:
            fail(f"no memory called {name!r} on {conn.place} (give --create to make "
                 "it, or --db/--data for where it is kept; `tomc memory list` lists them)",
                 EXIT_BAD_INPUT)
        from tomc.api import Session, TomError
        try:
            with Session.attach(name, db=conn, create=True):
                typer.echo(f"tomc: created memory {name!r} on {conn.place}", err=True)
        except TomError as err:  # a name no memory may have
            fail(str(err), EXIT_BAD_INPUT)


def _web(command: str) -> tuple:
    """(uvicorn, tomc.web.guards, create_app), imported now: FastAPI and uvicorn load only
    for these verbs, and a missing one names the extra that installs it, for `command`."""
    with needs_extra("web", command):
        import uvicorn

        from tomc.web import guards
        from tomc.web.app import create_app
    return uvicorn, guards, create_app


def _serve(conn: Database, web: tuple, names: Optional[Sequence[str]], host: str, port: int,
           ready: str, every: Optional[tuple[float, Callable[[], None]]] = None,
           allowed_hosts: Optional[Sequence[str]] = None) -> None:
    """Serve the app (`web`: what _web imported) until Ctrl-C or SIGTERM, printing `ready`
    once it listens; `every`: (seconds, what to run that often meanwhile). Requests whose
    Host header is not one of `allowed_hosts` are refused (400); by default the loopback
    names when `host` is a loopback address, else any."""
    uvicorn, guards, create_app = web
    app = create_app(conn, names, allowed_hosts=answered_hosts(host, allowed_hosts))
    guards.printable_logs()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           timeout_graceful_shutdown=1,
                                           timeout_keep_alive=guards.KEEP_ALIVE_S,
                                           limit_concurrency=guards.CONCURRENCY))
    # In a thread, so that this one says when it listens (and Ctrl-C or SIGTERM, which
    # unwind this thread, stop it).
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            fail(f"cannot listen on {host}:{port} (in use?)", EXIT_BAD_INPUT)
        time.sleep(0.05)
    typer.echo(ready, err=True)
    last = time.monotonic()
    try:
        while thread.is_alive():
            thread.join(0.5)
            if every is not None and time.monotonic() - last >= every[0]:
                every[1]()
                last = time.monotonic()
    finally:
        server.should_exit = True
        thread.join(5)
