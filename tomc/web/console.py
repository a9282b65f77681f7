"""The live console of a memory (docs/console.md): a page that follows the memory as any
writer applies events, and replays any past step. Read-only; an agent token's page shows
only that agent's mind (tomc/web/snapshot.py).

    GET /memories/{name}/console?access_token=T[&step=N]  the page, live or replaying step N
                                                       (htmx, vendored in static/)
    GET /memories/{name}/console/panel[?at_step=N]     the panel at now or at step N (HTML)
    GET /memories/{name}/stream?access_token=T[&since=R]  server-sent events: `step` (data:
                                                       the revision) each time it moves

The stream polls the memory's revision key (one GET) every POLL seconds, so an event
written by any process (the CLI, MCP, another server) reaches the page within that time.
The page's address names the step it replays (`&step=N`; static/console.js keeps it so),
so a replayed step can be shared, and the back button returns to the step before.
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

from tomc.api import Session
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


# How far back the console looks for the last false belief: each step searched is a view
# read and an analysis, and the panel waits for them (a memory of 100,000 steps, none out
# of date, would otherwise be searched whole on the first page).
LOOKBACK = 200


class OutOfDate:
    """The last step an agent held a false belief, per memory, kept between panels: past
    steps do not change, so each panel searches only the steps written since the last one,
    and never more than the last LOOKBACK (a memory dropped and created again is held by a
    new session: searched afresh)."""

    def __init__(self):
        self._known: dict[str, tuple[Session, int, Optional[int]]] = {}

    def last(self, name: str, session: Session, latest: int) -> Optional[int]:
        """The last step up to `latest` an agent of memory `name` held a false belief
        (None: none yet); the caller holds the memory (Memories.use), so one at a time."""
        held, checked, found = self._known.get(name, (None, 0, None))
        if held is not session or latest < checked:
            checked, found = 0, None
        found = snapshot.last_false_step(session, latest, max(checked, latest - LOOKBACK),
                                         found)
        self._known[name] = (session, latest, found)
        return found


def router(held: Memories, grant) -> APIRouter:
    """The console's routes; `grant` is the API's token dependency (tomc/web/routes.py)."""
    pages = APIRouter(prefix="/memories/{name}")
    Granted = Annotated[object, Depends(grant)]
    out_of_date = OutOfDate()

    @pages.get("/console", response_class=HTMLResponse, summary="The live console (HTML)")
    def page(name: str, who: Granted, request: Request,
             step: Annotated[Optional[int], Query(
                 ge=0, description="Open replaying this step (the address a replayed step "
                                   "shows, to share); none: live.")] = None) -> HTMLResponse:
        revision = held.revision(name)  # read first: a write after it is streamed
        shown = _shown(held, out_of_date, name, who.agent, step, _token(request))
        return HTMLResponse(_templates.get_template("console.html").render(
            **shown, static=STATIC_PATH, agent=who.agent, revision=revision,
            panel=_templates.get_template("panel.html").render(**shown, oob=False)))

    @pages.get("/console/panel", response_class=HTMLResponse,
               summary="The console's panel at now, or at a past step (HTML)")
    def panel(name: str, who: Granted, request: Request,
              at_step: Annotated[Optional[int], Query(ge=0)] = None) -> HTMLResponse:
        # oob: the panel brings the header's "live"/"replaying" along (htmx out of band)
        return HTMLResponse(_templates.get_template("panel.html").render(
            **_shown(held, out_of_date, name, who.agent, at_step, _token(request)), oob=True))

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


def _shown(held: Memories, out_of_date: OutOfDate, name: str, agent: Optional[str],
           at_step: Optional[int], token: str) -> dict:
    """What the page and the panel render: memory `name` at `at_step` (None: live) as
    `agent` sees it (None: the supervisor, who alone sees false beliefs, and so the last
    step with one)."""
    with held.use(name, agent) as session:
        shown = (snapshot.agent if agent else snapshot.supervisor)(session, at_step)
        last_false = None if agent else out_of_date.last(name, session, shown["latest"])
    return {"name": name, "token": token, "s": shown, "live": at_step is None,
            "graph": _graph(shown), "last_false": last_false, "lookback": LOOKBACK}


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
