"""The ASGI app of `tomc http`: the API (tomc/web/routes.py) and the console
(tomc/web/console.py) of the memories one FalkorDB holds.

    app = create_app(database, memories=["support"])   # memories None: every memory
    schema = app.openapi()                              # committed as docs/openapi.json
"""

from __future__ import annotations

from typing import Optional, Sequence

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.middleware.trustedhost import TrustedHostMiddleware

from tomc import __version__
from tomc.runtime.connection import Database
from tomc.web import console, errors, guards, health, routes
from tomc.web.memories import Memories

DESCRIPTION = """\
The questions and writes of tomc's named memories as JSON over HTTP: the same answers as
`tomc memory ask --json` and the MCP tools. Every request carries a token from `tomc token
issue` as `Authorization: Bearer <token>`: a supervisor token writes and asks everything
about its memory; an agent token reads only that agent's mind (403 on any other). Errors
carry the diagnostics of `tomc check --json` (docs/http.md)."""


def create_app(db: Optional[Database], memories: Optional[Sequence[str]] = None,
               allowed_hosts: Optional[Sequence[str]] = None) -> FastAPI:
    """The app over `db` (left open: the caller's; None only to describe the app: its
    schema), serving `memories` (None: all), answering only requests whose Host header is
    one of `allowed_hosts` (None: any; tomc/web/guards.py)."""
    held = Memories(db, memories)
    app = FastAPI(title="tomc", version=__version__, description=DESCRIPTION,
                  docs_url=None, redoc_url=None)  # no UI that loads scripts from a CDN
    errors.install(app)
    api, grant = routes.router(held)
    app.include_router(api)
    app.include_router(console.router(held, grant))
    app.include_router(health.router(db))  # public: ok or not, for health checks
    app.mount(console.STATIC_PATH, console.static(), name="static")
    app.add_middleware(guards.BodyLimit)
    app.add_middleware(guards.Headers)
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.state.memories = held
    app.router.add_event_handler("shutdown", held.close)
    app.openapi = lambda: _schema(app)
    return app


def _schema(app: FastAPI) -> dict:
    """FastAPI's schema, with the bearer tokens every route needs, and less the 422 answers
    it documents for every route: a request that does not validate is a 400 `bad_input`
    here (tomc/web/errors.py), like any bad input."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version,
                             description=app.description, routes=app.routes)
        for route in schema["paths"].values():
            for operation in route.values():
                operation.get("responses", {}).pop("422", None)
        components = schema.setdefault("components", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            components.get("schemas", {}).pop(unused, None)
        components["securitySchemes"] = {"bearer": {
            "type": "http", "scheme": "bearer",
            "description": "A token from `tomc token issue NAME [--agent A]`; where a header "
                           "cannot be set (EventSource), `?access_token=`."}}
        schema["security"] = [{"bearer": []}]
        app.openapi_schema = schema
    return app.openapi_schema
