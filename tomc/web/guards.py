"""What guards `tomc http` and `tomc console` beside the tokens (docs/security.md, "The HTTP
server"): the Host header checked (DNS rebinding), security headers on every answer, a
bound on a request's body, connection bounds, and logs that print hostile text as escapes.

    app.add_middleware(BodyLimit); app.add_middleware(Headers)   # tomc/web/app.py
    printable_logs()                                             # before uvicorn logs
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The largest request body answered (a write is text: far below), in bytes.
MAX_BODY = 1024 * 1024
# How long an idle kept-alive connection stays open, and how many connections at once.
KEEP_ALIVE_S = 5
CONCURRENCY = 200
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # The console's URL carries its token (?access_token=): never sent on as a referrer.
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy",
     b"frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'"),
    (b"cache-control", b"no-store"),
]


class Headers:
    """Adds HEADERS to every HTTP answer (those the app set itself are kept)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((n, v) for n, v in HEADERS if n not in given)]
            await send(message)

        await self.app(scope, receive, with_headers)


class BodyLimit:
    """Answers 413 to a request whose body is over MAX_BODY bytes, by its Content-Length
    or as it streams in (a chunked body has none): the body is read here, at most MAX_BODY
    bytes of it, and handed to the app whole."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.limit:
            await _too_large(send, self.limit)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await _too_large(send, self.limit)
                return
        given = False

        async def whole() -> Message:
            nonlocal given
            if given:
                return await receive()  # after the body: a disconnect, when it comes
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, whole, send)


async def _too_large(send: Send, limit: int) -> None:
    body = (b'{"error": "bad_input", "message": "the request body is over %d bytes"}' % limit)
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _Printable(logging.Filter):
    """Rewrites a record's message so that control characters a client sent (a path, a
    header) print as escapes, never reach the terminal as codes."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        shown = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in message)
        if shown != message:
            record.msg, record.args = shown, None
        return True


def printable_logs() -> None:
    """Install `_Printable` on the loggers `tomc http` writes through."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "tomc"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Printable) for f in logger.filters):
            logger.addFilter(_Printable())
