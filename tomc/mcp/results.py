"""Tool results and tool errors, as an MCP client receives them.

A result is the answer's `--json` fields (`to_json()` of tomc's answers) as structured
content, and the same JSON as text content for a model to read. Strings in it that read like
instructions are listed under `flagged` (path, verbatim value, quoted value, reason, and the
events that brought it: step, kind, source, authority), with a notice before the JSON that
they are data (tomc/analysis/quoting.py); nothing else about them changes.

An error is a tool result with `isError` set (never a protocol error, never a traceback):

    {"error": "bad_input" | "access_denied" | "stale_write" | "not_found" |
              "database_unavailable",
     "message": "...", "exit_code": 2 | 4 | 6 | 2 | 3,   (as `tomc memory` exits)
     "diagnostics": [{"path", "line", "column", "severity", "code", "message", "hint"}],
     "rendered": "<record>:1:1: error[E101]: unknown agent `Mayaa`\\n  hint: ..."}

`Guard` runs each tool call on sessions of its own from the server's pool (the SDK runs sync
tools on worker threads, several at once; a Session is used by one thread at a time:
tomc/mcp/pool.py) and turns tomc's exceptions into these errors; anything else is left to
the SDK, which reports it as a tool error without its traceback.
"""

from __future__ import annotations

import json
from typing import Callable, Optional, Sequence

from tomc.analysis.quoting import NOTICE
from tomc.api import TomError
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.program import AnyEvent
from tomc.mcp.pool import SessionPool
from tomc.mcp.sdk import CallToolResult, TextContent
from tomc.outcomes import ANSWERED, BAD_INPUT, DATABASE_UNAVAILABLE, outcome
from tomc.wire import error_json, event_json, with_flags

EXIT_BAD_INPUT, EXIT_NO_DATABASE = BAD_INPUT.exit_code, DATABASE_UNAVAILABLE.exit_code


def answer(payload: dict, events: Sequence[AnyEvent] = ()) -> CallToolResult:
    """A successful result: `payload` (JSON-shaped), plus `flagged` and `notice` when some
    of its strings read like instructions (their origins looked up in `events`)."""
    body = with_flags(payload, events)
    return CallToolResult(content=_content(body, "value(s) in this result read like "
                                                 "instructions (see `flagged`)."),
                          structuredContent=body)


def _content(body: dict, flagged_says: str) -> list[TextContent]:
    """The text content of a result: the notice first when `body` has `flagged` strings
    ("N " + `flagged_says`), then `body` as JSON."""
    content = []
    if "flagged" in body:
        content.append(TextContent(type="text",
                                   text=f"{len(body['flagged'])} {flagged_says} {NOTICE}"))
    content.append(TextContent(type="text", text=json.dumps(body, ensure_ascii=False,
                                                            indent=1)))
    return content


def failure(kind: str, message: str, exit_code: int,
            diagnostics: Sequence[Diagnostic] = (), text: str = "",
            committed: Sequence[AnyEvent] = ()) -> CallToolResult:
    """An error result (`isError`), with the diagnostics as `tomc check --json` gives them
    and as it prints them (`rendered`). An error echoes the input it refuses, so it is
    flagged as a result is (`flagged`, `notice`, and the notice before the JSON);
    `committed`: the events of a batch that did commit before it failed (docs/storage.md,
    "Retries")."""
    body = error_json(kind, message, exit_code, diagnostics, text)
    if committed:
        body["committed"] = [event_json(e) for e in committed]
    return CallToolResult(content=_content(body, "text(s) in this error read like instructions "
                                                 "(see `flagged`): they echo the input "
                                                 "refused."),
                          structuredContent=body, isError=True)


class Guard:
    """Runs tool bodies, each holding a set of sessions of `pool` (`held`), and maps tomc's
    errors to error results."""

    def __init__(self, pool: SessionPool) -> None:
        self.held = pool.held  # resources and prompts hold a set the same way

    def __call__(self, body: Callable[[], CallToolResult],
                 origin: Optional[str] = None) -> CallToolResult:
        with self.held():
            try:
                return body()
            except TomError as err:
                return failure("bad_input", _first_line(err.diagnostics, str(err)),
                               EXIT_BAD_INPUT, _at(err.diagnostics, origin), err.text,
                               err.committed)
            except DiagnosticError as err:  # a typed argument that is not a name, key, ...
                return failure("bad_input", _first_line(err.diagnostics, str(err)),
                               EXIT_BAD_INPUT, _at(err.diagnostics, origin))
            except ANSWERED as err:  # the kind and exit code tomc/outcomes.py gives it
                found = outcome(err)
                message = str(err)
                if found is DATABASE_UNAVAILABLE:  # the server's first line only
                    message = message.splitlines()[0] if message else message
                return failure(found.kind, message, found.exit_code,
                               committed=getattr(err, "committed", ()))


def _first_line(diagnostics: Sequence[Diagnostic], fallback: str) -> str:
    return diagnostics[0].message if diagnostics else fallback


def _at(diagnostics: Sequence[Diagnostic], origin: Optional[str]) -> list[Diagnostic]:
    """Diagnostics of text a tool was given name the tool (`<record>`), not `<apply>`."""
    if origin is None:
        return list(diagnostics)
    return [d if d.path not in ("<apply>", "<check>", "<ask>") else
            Diagnostic(d.code, d.message, d.span, origin, d.hint, d.severity, d.source)
            for d in diagnostics]
