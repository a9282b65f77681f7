"""An applier's reply to a write, typed (tomc/memory/applier.py writes it as JSON on the
request's reply list; tomc/memory/submit.py waits for it). Every writer reads it through
`Reply`: the API raises `reply.failure()`, the CLI exits with that failure's code, so what a
reply means is written once. A stdlib dataclass, not a pydantic model: `tomc memory apply`
through an applier is a thin client that loads neither pydantic nor the compiler
(tests/test_startup.py).

    reply = Reply.of(json.loads(raw))
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

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

from tomc.runtime.errors import (
    AccessDenied,
    DatabaseUnavailable,
    Replaced,
    StaleWrite,
    TomError,
)


@dataclass(frozen=True)
class Reply:
    """One reply of a memory's applier (the fields above). Fields a newer applier adds are
    kept in `extra`, not refused: a writer and an applier of different tomc versions still
    talk."""

    error: Optional[str] = None  # one of those above; another (a newer applier's) is unavailable
    events: list = field(default_factory=list)
    whole: list = field(default_factory=list)
    step: Optional[int] = None
    replicas: Optional[int] = None
    committed: list = field(default_factory=list)
    message: str = ""
    diagnostics: list = field(default_factory=list)
    text: str = ""
    expected: Optional[int] = None
    actual: Optional[int] = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, found: dict) -> "Reply":
        """The reply an applier sent as the JSON object `found`. Raises ValueError when a
        field has the wrong type (not an applier's reply)."""
        known = {f.name: f.type for f in dataclasses.fields(cls) if f.name != "extra"}
        for name, want in (("error", str), ("message", str), ("text", str), ("step", int),
                           ("replicas", int), ("expected", int), ("actual", int),
                           ("events", list), ("whole", list), ("committed", list),
                           ("diagnostics", list)):
            value = found.get(name)
            if value is not None and (not isinstance(value, want) or isinstance(value, bool)):
                raise ValueError(f"an applier's reply has {name} = {value!r}: not a {want.__name__}")
        return cls(**{k: v for k, v in found.items() if k in known and v is not None},
                   extra={k: v for k, v in found.items() if k not in known})

    def failure(self) -> Exception:
        """The exception this error reply means (its `committed` events raw, as the reply
        gives them, on `.committed`): TomError ("diagnostics"), StaleWrite, Replaced,
        AccessDenied ("refused"), LookupError ("no_memory"), else DatabaseUnavailable. A
        reply without an error has none: ValueError."""
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


def _diagnostic(found: dict):
    """A Diagnostic as an applier's reply carries it (`Diagnostic`'s fields; its span as a
    dict). The checker's types are loaded only here, for bad input."""
    from tomc.dsl import ast
    from tomc.dsl.diagnostics import Diagnostic

    span = ast.Span(**found["span"]) if found.get("span") else None
    return Diagnostic(found["code"], found["message"], span, found["path"], found.get("hint"))
