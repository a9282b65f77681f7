"""One table says what each of tomc's errors means on every surface (tomc/outcomes.py): the
kind MCP and HTTP answer with, the CLI's exit code, the HTTP status. The surfaces read it
(tests/test_http.py, test_mcp.py and test_cli.py check each answer end to end)."""

from __future__ import annotations

import redis

from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.outcomes import TABLE, by_status, outcome
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, Replaced, StaleWrite, TomError
from tomc.runtime.tokens import TokenRefused
from tomc.web.errors import STATUSES

BAD = [Diagnostic("E101", "unknown agent `Mayaa`", None, "<apply>")]


def test_each_error_has_one_kind_exit_code_and_status_most_specific_first():
    found = {type(err).__name__: (o.kind, o.exit_code, o.status) for err in (
        TokenRefused(BAD), TomError(BAD), DiagnosticError(BAD), Replaced("dropped"),
        AccessDenied("not yours"), StaleWrite(2, 5), LookupError("no memory"),
        KeyError("k"), DatabaseUnavailable("gone"), redis.ConnectionError("lost"),
        ValueError("two questions")) if (o := outcome(err))}
    assert found == {
        "TokenRefused": ("unauthorized", 2, 401), "TomError": ("bad_input", 2, 400),
        "DiagnosticError": ("bad_input", 2, 400), "Replaced": ("bad_input", 2, 400),
        "AccessDenied": ("access_denied", 4, 403), "StaleWrite": ("stale_write", 6, 409),
        "LookupError": ("not_found", 2, 404), "KeyError": ("not_found", 2, 404),
        "DatabaseUnavailable": ("database_unavailable", 3, 503),
        "ConnectionError": ("database_unavailable", 3, 503),
        "ValueError": ("bad_input", 2, 400)}
    assert outcome(RuntimeError("a bug")) is None


def test_the_http_statuses_are_the_tables():
    assert STATUSES == {o.status: (o.kind, o.exit_code) for _, o in TABLE}
    assert sorted(STATUSES) == [400, 401, 403, 404, 409, 503]
    assert by_status(409).kind == "stale_write"
