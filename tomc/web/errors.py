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

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from tomc.api import TomError
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.outcomes import ANSWERED, DATABASE_UNAVAILABLE, TABLE, by_status, outcome
from tomc.runtime.tokens import TokenRefused
from tomc.wire import error_json

# status -> (error kind, exit code as `tomc memory` exits), for each status the API answers
# (tomc/outcomes.py: the one table of what each error means)
STATUSES = {found.status: (found.kind, found.exit_code) for _, found in TABLE}


def error(status: int, message: str, diagnostics=(), text: str = "") -> JSONResponse:
    """The answer of one error (tomc/outcomes.py gives its kind and exit code)."""
    found = by_status(status)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_json(found.kind, message, found.exit_code, diagnostics, text),
                        status, headers=headers)


def install(app: FastAPI) -> None:
    """Map tomc's exceptions to their answers on `app` (none leaks a traceback): those with
    diagnostics show them; every other one its first line, with the status
    tomc/outcomes.py gives it."""

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

    async def answered(request: Request, err: Exception) -> JSONResponse:
        found = outcome(err)
        message = str(err.args[0]) if isinstance(err, LookupError) and err.args else str(err)
        if found is DATABASE_UNAVAILABLE and message:  # the server's first line only
            message = message.splitlines()[0]
        return error(found.status, message)

    for kind in ANSWERED:
        if kind not in (TokenRefused, TomError, DiagnosticError):
            app.exception_handler(kind)(answered)
