"""Errors of the runtime layer, and `TomError` (bad input), which every layer above raises
and tomc.api re-exports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from tomc.dsl.diagnostics import Diagnostic


class DatabaseUnavailable(Exception):
    """FalkorDB could not be started or reached, or failed a statement; the CLI prints one
    line and exits 3. `origin` is the .tom line (number, text) of the statement that failed,
    when one did (the plan's source map)."""

    def __init__(self, message: str, origin: Optional[tuple[int, str]] = None):
        super().__init__(message)
        self.origin = origin
        # The events of the failing write that did commit before it failed (a batch cut
        # by a failure: docs/storage.md, "Retries").
        self.committed: list = []


class StaleWrite(Exception):
    """A write said which step it follows (`after_step`), and another writer got there
    first; nothing was written (the 409 of HTTP memories)."""

    def __init__(self, expected: int, actual: int):
        super().__init__(f"the memory is at step {actual}, not {expected}: another writer "
                         "got there first; nothing was written")
        self.expected = expected
        self.actual = actual
        self.committed: list = []  # as DatabaseUnavailable.committed


class AccessDenied(Exception):
    """A session reading as one agent asked about another mind, or tried to write
    (the rules of private minds: docs/storage.md); FalkorDB refuses it underneath too."""


class Replaced(DatabaseUnavailable):
    """The memory this session attached to was dropped (and perhaps created again under the
    same name) since: its incarnation id changed. Nothing was written; attach again. The API
    raises it as TomError E145."""


class TomError(ValueError):
    """Bad input: `diagnostics` (code, message, span within `text`, hint), as `tomc check`
    reports them. Nothing of the failing call was written (for a batch racing another writer,
    see docs/storage.md, "Limits")."""

    def __init__(self, diagnostics: list[Diagnostic], text: str = ""):
        super().__init__("\n".join(d.render(text) for d in diagnostics))
        self.diagnostics = diagnostics
        self.text = text
        # The events of the failing write that committed before it failed (docs/storage.md,
        # "Retries"): a retry with the same idempotency key applies only the rest.
        self.committed: list = []
