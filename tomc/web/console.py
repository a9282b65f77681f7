"""The live console of a memory (docs/console.md): a page that follows the memory as any
writer applies events, and replays any past step. Read-only; an agent token's page shows
only that agent's mind (tomc/web/snapshot.py).

    GET /memories/{name}/console?access_token=T        the page (htmx, vendored in static/)
    GET /memories/{name}/console/panel[?at_step=N]     the panel at now or at step N (HTML)
    GET /memories/{name}/stream?access_token=T[&since=R]  server-sent events: `step` (data:
                                                       the revision) each time it moves

The stream polls the memory's revision key (one GET) every POLL seconds, so an event
written by any process (the CLI, MCP, another server) reaches the page within that time.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' signatures, whose
# dependency types (`Granted`) are made inside router().

import asyncio
import json
import math
from pathlib import Path
from typing import Annotated, AsyncIterator, Optional

from anyio import to_thread
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from tomc.runtime import tokens
from tomc.web import snapshot
from tomc.web.memories import Memories

STATIC_PATH = "/static"
POLL = 0.2  # seconds between two reads of the revision key
KEEPALIVE = 15.0  # seconds between two SSE comments, so proxies keep the stream open
RECHECK = 1.0  # seconds between two looks at whether the stream's token is still valid
_templates = Environment(loader=PackageLoader("tomc.web", "templates"),
                         autoescape=select_autoescape(["html"]))


def static() -> StaticFiles:
    """The vendored frontend (htmx and its SSE extension, with their licences) and CSS."""
    return StaticFiles(directory=Path(__file__).parent / "static")


def router(held: Memories, grant) -> APIRouter:
    """The console's routes; `grant` is the API's token dependency (tomc/web/routes.py)."""
    pages = APIRouter(prefix="/memories/{name}")
    Granted = Annotated[object, Depends(grant)]

    @pages.get("/console", response_class=HTMLResponse, summary="The live console (HTML)")
    def page(name: str, who: Granted, request: Request) -> HTMLResponse:
        token = _token(request)
        revision = held.revision(name)  # read first: a write after it is streamed
        return HTMLResponse(_templates.get_template("console.html").render(
            name=name, token=token, static=STATIC_PATH, agent=who.agent, revision=revision,
            panel=_panel(held, name, who.agent, None, token)))

    @pages.get("/console/panel", response_class=HTMLResponse,
               summary="The console's panel at now, or at a past step (HTML)")
    def panel(name: str, who: Granted, request: Request,
              at_step: Annotated[Optional[int], Query(ge=0)] = None) -> HTMLResponse:
        return HTMLResponse(_panel(held, name, who.agent, at_step, _token(request)))

    @pages.get("/stream", summary="Server-sent events: `step` each time the memory moves",
               response_class=StreamingResponse,
               responses={200: {"content": {"text/event-stream": {}}}})
    async def stream(name: str, who: Granted, request: Request,
                     since: Annotated[Optional[int], Query(
                         ge=0, description="The revision the client shows: no event until "
                                           "the memory moves past it.")] = None) \
            -> StreamingResponse:
        return StreamingResponse(_steps(held, name, request, since, who.token_id),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    return pages


def _token(request: Request) -> str:
    return (tokens.from_header(request.headers.get("authorization"))
            or request.query_params.get("access_token", ""))


def _panel(held: Memories, name: str, agent: Optional[str], at_step: Optional[int],
           token: str) -> str:
    with held.use(name, agent) as session:
        shown = (snapshot.agent if agent else snapshot.supervisor)(session, at_step)
    return _templates.get_template("panel.html").render(
        name=name, token=token, s=shown, live=at_step is None, graph=_graph(shown))


async def _steps(held: Memories, name: str, request: Request,
                 since: Optional[int], token_id: str) -> AsyncIterator[str]:
    """`event: step` with the revision each time it moves past `since` (None: first the
    revision now), until the client leaves or its token is revoked or lapses (looked at
    every RECHECK seconds): then `event: revoked`, and the stream ends."""
    seen, quiet, checked = since, 0.0, 0.0
    while not await request.is_disconnected():
        if checked >= RECHECK:
            checked = 0.0
            if not await to_thread.run_sync(tokens.valid, held.db, token_id):
                yield "event: revoked\ndata: \"the token was revoked or lapsed\"\n\n"
                return
        revision = await to_thread.run_sync(held.revision, name)
        if revision != seen:
            seen, quiet = revision, 0.0
            yield f"event: step\ndata: {json.dumps(revision)}\n\n"
        elif quiet >= KEEPALIVE:
            quiet = 0.0
            yield ": still here\n\n"
        await asyncio.sleep(POLL)
        quiet += POLL
        checked += POLL


def _graph(shown: dict) -> dict:
    """Who told whom, laid out for SVG: agents on a circle, one arrow per edge."""
    names = sorted({e["speaker"] for e in shown["told"]} | {e["listener"] for e in shown["told"]})
    size, radius = 320, 120
    at = {n: (size / 2 + radius * math.cos(2 * math.pi * i / max(1, len(names)) - math.pi / 2),
              size / 2 + radius * math.sin(2 * math.pi * i / max(1, len(names)) - math.pi / 2))
          for i, n in enumerate(names)}
    edges = []
    for e in shown["told"]:
        (x1, y1), (x2, y2) = at[e["speaker"]], at[e["listener"]]
        length = math.hypot(x2 - x1, y2 - y1) or 1
        cut = 22 / length  # stop short of the node's circle
        edges.append({**e, "x1": x1 + (x2 - x1) * cut, "y1": y1 + (y2 - y1) * cut,
                      "x2": x2 - (x2 - x1) * cut, "y2": y2 - (y2 - y1) * cut})
    return {"size": size, "nodes": [{"name": n, "x": x, "y": y} for n, (x, y) in at.items()],
            "edges": edges}
