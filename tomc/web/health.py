"""`GET /healthz` on `tomc http`: whether the server's FalkorDB answers PING, for a
container's HEALTHCHECK or a load balancer (deploy/compose.yaml; docs/deployment.md).

    app.include_router(health.router(db))   # tomc/web/app.py

It takes no token (a probe holds none) and so says nothing beyond ok or not: 200
`{"status": "ok"}` or 503 `{"status": "unavailable"}`, never a version, a memory's name or
the error. It is under the app's Host check like every route: a probe inside the container
asks 127.0.0.1, which the loopback names that deploy/compose.yaml allows cover. It is not in
the OpenAPI schema (docs/openapi.json), whose every route needs a token.
"""

from __future__ import annotations

from typing import Optional

import anyio
import redis
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable

# A PING unanswered this long is a FalkorDB down (the connection's own statement timeout is
# `tomc http`'s 120 s, longer than any probe waits).
PING_TIMEOUT_S = 3.0


def router(db: Optional[Database]) -> APIRouter:
    """The /healthz route over `db` (None: the app is only described, never served)."""
    api = APIRouter()

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        if await _answers(db):
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "unavailable"}, status_code=503)

    return api


async def _answers(db: Optional[Database]) -> bool:
    """Whether `db` (on a cluster, its first master) answers PING within PING_TIMEOUT_S. A
    PING that hangs is left to finish in its thread: the probe is answered meanwhile."""
    if db is None:
        return False
    with anyio.move_on_after(PING_TIMEOUT_S):
        try:
            return bool(await anyio.to_thread.run_sync(db.redis.ping, abandon_on_cancel=True))
        except (redis.RedisError, OSError, DatabaseUnavailable):
            return False
    return False
