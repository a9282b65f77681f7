"""Bearer tokens on `tomc mcp --http` (docs/security.md): every HTTP request carries
`Authorization: Bearer <token>` from `tomc token issue`, checked against the memory and the
mode the server was started for, before the MCP SDK's app sees the request.

The answers follow RFC 6750, which the MCP authorization spec builds on: no token, or one
that is malformed, unknown or revoked, is 401 with `WWW-Authenticate: Bearer ...
error="invalid_token"`; a valid token of another memory or another agent (or an agent's token
on a supervisor's server, and the other way round) is 403 `insufficient_scope`. Tokens are
issued out of band (`tomc token issue`): there is no OAuth authorization server to discover.

    app = BearerGate(sdk_app, db, memory="support", agent="Maya")
"""

from __future__ import annotations

import json
from typing import Optional

import anyio

from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime import tokens
from tomc.runtime.tokens import TokenRefused, verify

REALM = "tomc"


class BearerGate:
    """An ASGI app that lets through (to `app`) only HTTP requests whose bearer token grants
    `memory` as `agent` (None: supervisor); lifespan events pass untouched."""

    def __init__(self, app, db: Database, memory: str, agent: Optional[str]):
        self.app = app
        self.db = db
        self.memory = memory
        self.agent = agent

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket route: refused, token or not
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = await anyio.to_thread.run_sync(self._refusal, _bearer(scope))
        if refusal is None:
            await self.app(scope, receive, send)
        else:
            await _refuse(send, *refusal)

    def _refusal(self, token: Optional[str]) -> Optional[tuple[int, str, str]]:
        """None when `token` may use this server; else (status, error, description)."""
        if token is None:
            return 401, "invalid_token", "a bearer token is required (tomc token issue)"
        try:
            grant = verify(self.db, token)
        except TokenRefused as err:
            return 401, "invalid_token", str(err).split(": ", 2)[-1]
        except DatabaseUnavailable:
            return 503, "temporarily_unavailable", "tokens cannot be checked now"
        if grant.memory != self.memory:
            return 403, "insufficient_scope", "this token is for another memory"
        if grant.agent != self.agent:
            mode = f"agent {self.agent}" if self.agent else "the supervisor"
            return 403, "insufficient_scope", f"this server serves {mode}; the token does not"
        return None


def _bearer(scope) -> Optional[str]:
    """The token of the request's `Authorization: Bearer` header, if any."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            return tokens.from_header(value.decode("latin-1"))
    return None


async def _refuse(send, status: int, error: str, description: str) -> None:
    """The RFC 6750 answer: a JSON body and, for 401/403, `WWW-Authenticate`."""
    body = json.dumps({"error": error, "error_description": description}).encode()
    challenge = f'Bearer realm="{REALM}", error="{error}", error_description="{description}"'
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if status in (401, 403):
        headers.append((b"www-authenticate", challenge.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
