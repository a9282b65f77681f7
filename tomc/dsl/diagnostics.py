"""One diagnostics type for every stage: a code, a message, a span, and an optional hint.

Rendered as `file:line:col: error[CODE]: message`, then the source line and a caret
under the span. Every code is listed in `CODES` and documented in docs/diagnostics.md.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Optional

from tomc.dsl.ast import Span

CODES = {
    "E001": "syntax error",
    "E002": "unreadable source (invalid UTF-8, NUL byte, or file not found)",
    "E101": "unknown agent",
    "E102": "unknown room",
    "E103": "unknown source",
    "E104": "unknown policy",
    "E110": "duplicate declaration",
    "E120": "exit from a room the agent is not in",
    "E121": "event needs the agent to be in a room",
    "E130": "chain deeper than the policy's depth",
    "E131": "chain names an agent twice",
    "E140": "malformed value",
    "E141": "value of the wrong cardinality",
    "E142": "expectation item of the wrong shape",
    "E143": "malformed argument to an API call (a name, key, value or step)",
    "E144": "not allowed here (a memory's policy, or a statement a session does not take)",
    "E145": "a memory dropped or created again since the session attached",
    "E146": "an idempotency key used again for another write",
    "E148": "time goes backwards (a clock or an event's time before the clock)",
    "E150": "invalid policy",
    "E151": "invalid routing rule",
    "E152": "too many perspectives for the policy's limit",
    "E160": "nothing to run",
    "E170": "unknown procedure",
    "E171": "procedure without steps",
    "E175": "a peek or a distraction not followed by an event seen in a room",
    "E176": "a peeker inside the room, or a distracted agent outside it",
    "E200": "a model's answer that is not candidate statements (tomc extract)",
    "E201": "an unreadable chat export (tomc extract)",
    "E202": "a candidate citing words its message does not have (tomc extract)",
    "E203": "a candidate that is not one event or agents/rooms line (tomc extract)",
    "E204": "a candidate speaking for someone other than its message's author (tomc extract)",
    "E205": "search by meaning without a usable embedding model (TOMC_EMBED_PROVIDER)",
    "E206": "no usable model for extraction: no provider or model, API key or SDK (tomc extract)",
    "E210": "a refused access token (malformed, unknown or revoked: tomc token)",
    "W180": "a question about a key no event has written (an error under --strict)",
}


@dataclass
class Diagnostic:
    """A problem in a source file.

    `code` is a key of `CODES`; `span` locates it (None only for whole-file problems such as
    a missing file); `hint` says what would be right ("did you mean ...").
    """

    code: str
    message: str
    span: Optional[Span]
    path: str = "<input>"
    hint: Optional[str] = None
    severity: str = "error"
    source: Optional[str] = field(default=None, repr=False)  # when not the checked file's

    def render(self, source: Optional[str]) -> str:
        """The human form: header line, the source line, a caret, and the hint. `source` is
        the text of the file checked; a diagnostic about another file (a policy it uses)
        carries that file's text itself."""
        source = self.source if self.source is not None else source
        line = self.span.line if self.span else 1
        col = self.span.column if self.span else 1
        out = [f"{self.path}:{line}:{col}: {self.severity}[{self.code}]: {self.message}"]
        lines = source.split("\n") if source else []  # the parser counts only \n
        if self.span and 0 < line <= len(lines):
            text = lines[line - 1].rstrip("\r").replace("\t", " ")
            width = 1
            if self.span.end_line == line:
                width = max(1, self.span.end_column - col)
            width = min(width, max(1, len(text) - col + 1))
            out.append(f"  {line:>4} | {text}")
            out.append(f"       | {' ' * (col - 1)}{'^' * width}")
        if self.hint:
            out.append(f"       = help: {self.hint}")
        return "\n".join(out)

    def to_json(self) -> dict:
        """The machine form used by `--json`."""
        return {
            "path": self.path,
            "line": self.span.line if self.span else 1,
            "column": self.span.column if self.span else 1,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class DiagnosticError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic found so far.
    `recovered`, from the parser only: (the AST, its text) of the file with its lines in
    error taken out, when the rest parses (the checker reports unknown names in it)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    recovered: Optional[tuple] = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        return "\n".join(d.message for d in self.diagnostics)


def did_you_mean(name: str, candidates: Iterable[str]) -> Optional[str]:
    """A hint naming the closest candidate, or listing the candidates when none is close."""
    options = sorted(set(candidates))
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    if close:
        return f"did you mean `{close[0]}`?"
    if options and len(options) <= 8:
        return "known: " + ", ".join(f"`{o}`" for o in options)
    return None
