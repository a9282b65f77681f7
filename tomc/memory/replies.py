"""An applier's reply to a write, typed (tomc/memory/applier.py writes it as JSON on the
request's reply list; tomc/memory/submit.py waits for it). Every writer reads it through
`Reply`: the API raises `reply.failure()`, the CLI exits with that failure's code, so what a
reply means is written once.

    reply = Reply.model_validate(json.loads(raw))
    if reply.error is None:
        reply.step, reply.events       # the memory's step; each event's step, text, witnesses
    else:
        raise reply.failure()          # TomError, StaleWrite, Replaced, ...

The fields, by `error`:

- None: `events` ([{step, text, witnesses, ...}]), `whole` (each event as
  tomc/engine/event_codec.py keeps it), `step`, `replicas` (how many replicas confirmed the
  commit; None when nothing committed now);
- "diagnostics": bad input; `diagnostics` (as `Diagnostic` fields), `text`;
- "stale": `expected`, `actual` (the writer's `after_step` and the memory's step);
- "replaced" (the memory was dropped or created again since the writer attached),
  "refused" (an agent's write that is not its own), "no_memory", "unavailable", "failed":
  `message`.

Every error reply may carry `committed`: the events of the request that did commit.
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic
from tomc.runtime.errors import (
    AccessDenied,
    DatabaseUnavailable,
    Replaced,
    StaleWrite,
    TomError,
)

class Reply(BaseModel):
    """One reply of a memory's applier (the fields above). Fields a newer applier adds
    are kept, not refused: a writer and an applier of different tomc versions still talk."""

    model_config = ConfigDict(extra="allow")

    error: Optional[str] = None  # one of those above; another (a newer applier's) is unavailable
    events: list[dict] = []
    whole: list[dict] = []
    step: Optional[int] = None
    replicas: Optional[int] = None
    committed: list[dict] = []
    message: str = ""
    diagnostics: list[dict] = []
    text: str = ""
    expected: Optional[int] = None
    actual: Optional[int] = None

    def failure(self) -> Exception:
        """The exception this error reply means (its `committed` events raw, as the reply
        gives them, on `.committed`): TomError ("diagnostics"), StaleWrite, Replaced, AccessDenied ("refused"),
        LookupError ("no_memory"), else DatabaseUnavailable. A reply without an error has
        none: ValueError."""
        if self.error is None:
            raise ValueError("a reply without an error is no failure")
        if self.error == "diagnostics":
            found: Exception = TomError([_diagnostic(d) for d in self.diagnostics], self.text)
        elif self.error == "stale":
            found = StaleWrite(self.expected, self.actual)
        elif self.error == "replaced":
            found = Replaced(self.message)
        elif self.error == "refused":
            found = AccessDenied(self.message)
        elif self.error == "no_memory":
            found = LookupError(self.message)
        else:
            found = DatabaseUnavailable(self.message)
        found.committed = self.committed
        return found


def _diagnostic(found: dict) -> Diagnostic:
    """A diagnostic as an applier's reply carries it (`Diagnostic`'s fields; its span as a
    dict)."""
    span = ast.Span(**found["span"]) if found.get("span") else None
    return Diagnostic(found["code"], found["message"], span, found["path"], found.get("hint"))
