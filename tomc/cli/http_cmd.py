"""`tomc http --memory NAME | --all [--port N]`: the HTTP API and live console of named
memories (tomc/web/; docs/http.md, docs/console.md)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import DATA_OPTION, DB_OPTION, EXIT_BAD_INPUT, EXIT_OK, database, fail
from tomc.cli.extras import needs_extra
from tomc.engine import memory as memories


def http(memory: Optional[list[str]] = typer.Option(
             None, "--memory", "-m", help="A memory to serve (repeat for several; it must "
                                          "exist: `tomc memory apply` creates one)."),
         every: bool = typer.Option(False, "--all", help="Serve every memory on the server, "
                                                         "those created later too."),
         port: int = typer.Option(8780, "--port", min=1, max=65535, help="Port to listen on."),
         host: str = typer.Option("127.0.0.1", "--host",
                                  help="Address to listen on (0.0.0.0: every interface; put "
                                       "TLS in front, tokens travel in headers)."),
         db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION) -> None:
    """Serve named memories as JSON over HTTP (`/memories/NAME/...`, OpenAPI schema at
    `/openapi.json`) and a live console per memory (`/memories/NAME/console`), until Ctrl-C
    or SIGTERM.

    Every request needs a token from `tomc token issue NAME [--agent A]`: a supervisor token
    records events and asks everything; an agent token reads only that agent's mind. Exit 2
    on bad input (no memory named, or one that does not exist), 3 if FalkorDB is
    unavailable."""
    with needs_extra("web", "tomc http"):  # FastAPI and uvicorn load only for this verb
        import uvicorn

        from tomc.web.app import create_app
    if every == bool(memory):
        fail("name the memories to serve (--memory NAME, repeatable) or give --all",
             EXIT_BAD_INPUT)
    with database(db, data) as conn:
        for name in memory or []:
            if memories.read(conn, name) is None:
                fail(f"no memory called {name!r} (`tomc memory list` lists them; `tomc memory "
                     "apply` creates one)", EXIT_BAD_INPUT)
        server = uvicorn.Server(uvicorn.Config(create_app(conn, None if every else memory),
                                               host=host, port=port, log_level="warning",
                                               timeout_graceful_shutdown=1))
        # In a thread, so that this one says when it listens (and Ctrl-C or SIGTERM, which
        # unwind this thread, stop it).
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            if not thread.is_alive():
                fail(f"cannot listen on {host}:{port} (in use?)", EXIT_BAD_INPUT)
            time.sleep(0.05)
        served = "every memory" if every else ", ".join(memory or [])
        typer.echo(f"tomc: serving {served} on http://{host}:{port}/memories/NAME (console: "
                   "/memories/NAME/console?access_token=TOKEN); Ctrl-C or SIGTERM stops",
                   err=True)
        try:
            while thread.is_alive():
                thread.join(0.5)
        finally:
            server.should_exit = True
            thread.join(5)
    typer.echo("tomc: stopped", err=True)
    raise typer.Exit(EXIT_OK)
