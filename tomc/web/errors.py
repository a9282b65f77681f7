"""tomc's errors as HTTP answers: the body is `tomc.wire.error_json` (what an MCP tool
error carries), the status says which:

    401 unauthorized          no token, or one malformed, unknown or revoked (E210)
    400 bad_input             bad .tom text or arguments: `diagnostics` say where and why
    403 access_denied         a token for another memory, an agent token asking about
                              another mind or writing (the guarantee of `tomc memory --as`)
    404 not_found             no such memory here
    409 stale_write           `after_step` is behind: another writer got there first
    503 database_unavailable  FalkorDB does not answer
"""

from __future__ import annotations

import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from tomc.api import AccessDenied, DatabaseUnavailable, StaleWrite, TomError
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.runtime.tokens import TokenRefused
from tomc.wire import error_json

EXIT_BAD_INPUT, EXIT_NO_DATABASE, EXIT_DENIED, EXIT_STALE = 2, 3, 4, 6

# status, error kind, exit code (as `tomc memory` exits), for each status the API answers
STATUSES = {401: ("unauthorized", EXIT_BAD_INPUT), 400: ("bad_input", EXIT_BAD_INPUT),
            403: ("access_denied", EXIT_DENIED), 404: ("not_found", EXIT_BAD_INPUT),
            409: ("stale_write", EXIT_STALE), 503: ("database_unavailable", EXIT_NO_DATABASE)}


def error(status: int, message: str, diagnostics=(), text: str = "") -> JSONResponse:
    """The answer of one error (STATUSES gives its kind and exit code)."""
    kind, code = STATUSES[status]
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_json(kind, message, code, diagnostics, text), status,
                        headers=headers)


def install(app: FastAPI) -> None:
    """Map tomc's exceptions to their answers on `app` (none leaks a traceback)."""

    @app.exception_handler(TokenRefused)
    async def refused(request: Request, err: TokenRefused) -> JSONResponse:
        return error(401, err.diagnostics[0].message, err.diagnostics)

    @app.exception_handler(TomError)
    async def bad_input(request: Request, err: TomError) -> JSONResponse:
        message = err.diagnostics[0].message if err.diagnostics else str(err)
        return error(400, message, err.diagnostics, err.text)

    @app.exception_handler(DiagnosticError)
    async def bad_argument(request: Request, err: DiagnosticError) -> JSONResponse:
        return error(400, err.diagnostics[0].message, err.diagnostics)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
        found = [Diagnostic("E143", f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}",
                            None, "<http>") for e in err.errors()]
        return error(400, found[0].message if found else "bad request", found)

    @app.exception_handler(AccessDenied)
    async def denied(request: Request, err: AccessDenied) -> JSONResponse:
        return error(403, str(err))

    @app.exception_handler(StaleWrite)
    async def stale(request: Request, err: StaleWrite) -> JSONResponse:
        return error(409, str(err))

    @app.exception_handler(LookupError)
    async def missing(request: Request, err: LookupError) -> JSONResponse:
        return error(404, err.args[0] if err.args else str(err))

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, err: ValueError) -> JSONResponse:
        return error(400, str(err))

    @app.exception_handler(DatabaseUnavailable)
    async def unavailable(request: Request, err: DatabaseUnavailable) -> JSONResponse:
        return error(503, str(err).splitlines()[0])

    @app.exception_handler(redis.RedisError)
    async def redis_error(request: Request, err: redis.RedisError) -> JSONResponse:
        return error(503, str(err).splitlines()[0])
