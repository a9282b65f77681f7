"""What each of tomc's errors means on every surface, written once: its kind (the `error`
of an MCP tool error and of an HTTP error body), the code `tomc` exits with, the HTTP
status, and the words the CLI starts its message with. The API raises the exceptions; MCP
(tomc/mcp/results.py), HTTP (tomc/web/errors.py) and the CLI (tomc/cli/memory_cmd.py) ask
`outcome(err)` what to answer, so a new error is mapped here or nowhere.

    outcome(StaleWrite(2, 5))   # Outcome(kind='stale_write', exit_code=6, status=409, ...)

| kind | exit | HTTP | raised as |
| --- | --- | --- | --- |
| unauthorized | 2 | 401 | TokenRefused (a token malformed, unknown or revoked) |
| bad_input | 2 | 400 | TomError, DiagnosticError, Replaced (E145), ValueError |
| access_denied | 4 | 403 | AccessDenied |
| stale_write | 6 | 409 | StaleWrite |
| not_found | 2 | 404 | LookupError (no such memory) |
| database_unavailable | 3 | 503 | DatabaseUnavailable, redis.RedisError |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import redis

from tomc.dsl.diagnostics import DiagnosticError
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, Replaced, StaleWrite, TomError
from tomc.runtime.tokens import TokenRefused


@dataclass(frozen=True)
class Outcome:
    """How one kind of error is answered: `kind`, `exit_code`, `status` (HTTP) and `says`
    (how the CLI's message starts)."""

    kind: str
    exit_code: int
    status: int
    says: str


UNAUTHORIZED = Outcome("unauthorized", 2, 401, "unauthorized: ")
BAD_INPUT = Outcome("bad_input", 2, 400, "bad input:\n")
ACCESS_DENIED = Outcome("access_denied", 4, 403, "access denied: ")
STALE_WRITE = Outcome("stale_write", 6, 409, "stale write: ")
NOT_FOUND = Outcome("not_found", 2, 404, "")
DATABASE_UNAVAILABLE = Outcome("database_unavailable", 3, 503, "FalkorDB unavailable: ")

# Most specific first: a TokenRefused is a TomError, a TomError a ValueError, a Replaced
# (the memory dropped or made again since attach: E145) a DatabaseUnavailable.
TABLE: tuple[tuple[type, Outcome], ...] = (
    (TokenRefused, UNAUTHORIZED), (TomError, BAD_INPUT), (DiagnosticError, BAD_INPUT),
    (Replaced, BAD_INPUT), (AccessDenied, ACCESS_DENIED), (StaleWrite, STALE_WRITE),
    (LookupError, NOT_FOUND), (DatabaseUnavailable, DATABASE_UNAVAILABLE),
    (redis.RedisError, DATABASE_UNAVAILABLE), (ValueError, BAD_INPUT))

# The exceptions a surface answers (anything else is a bug: left to the surface's own
# last resort, never shown as a traceback to a client).
ANSWERED = tuple(kind for kind, _ in TABLE)


def outcome(err: BaseException) -> Optional[Outcome]:
    """How `err` is answered, or None for an exception that is not one of tomc's."""
    return next((found for kind, found in TABLE if isinstance(err, kind)), None)


def by_status(status: int) -> Outcome:
    """The outcome of HTTP `status` (one of TABLE's). Raises KeyError."""
    return next(found for _, found in TABLE if found.status == status)
