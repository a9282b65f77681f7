"""Errors of the runtime layer."""

from __future__ import annotations

from typing import Optional


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
