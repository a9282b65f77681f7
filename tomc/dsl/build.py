"""Statements built from Python values (the API's typed methods: tomc/api.py), checked as
the parser would check text: a name must be non-empty text on one line, a key
`subject.predicate` with both parts non-empty, a value non-empty text. Bad arguments raise
DiagnosticError (E143) with what would be right, before anything reaches the checker.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError

PATH = "<api>"


def name(text: object, what: str = "name") -> ast.Name:
    """An agent, room or source name."""
    if not isinstance(text, str) or not text.strip() or _unprintable(text):
        _bad(f"{what} must be non-empty text on one line, got {text!r}",
             f'e.g. "Maya"')
    return ast.Name(text=text, quoted=not text.isidentifier())


def names(texts: Union[str, Sequence[str]], what: str = "agent") -> list[ast.Name]:
    """One name, or several (a chain outermost first, or a group of agents)."""
    items = [texts] if isinstance(texts, str) else texts
    if not isinstance(items, (list, tuple)) or not items:
        _bad(f"expected one {what} name or a list of them, got {texts!r}", '"Maya" or ["Maya", "Billing"]')
    return [name(t, what) for t in items]


def key(text: object) -> ast.Key:
    """`subject.predicate` split at its first dot; a bare subject means its location."""
    if not isinstance(text, str) or not text.strip() or _unprintable(text):
        _bad(f"a key must be non-empty text like subject.predicate, got {text!r}",
             '"refund_4411.status" (or "marble" for marble.location)')
    subject, dot, predicate = text.partition(".")
    if not subject or (dot and not predicate):
        _bad(f"malformed key {text!r}: both sides of the dot must be non-empty",
             '"refund_4411.status"')
    return ast.Key(subject=name(subject, "key subject"),
                   predicate=name(predicate, "key predicate") if dot else None)


def value(text: object) -> ast.Value:
    """A value on the right of `=` (numbers and booleans are taken as their text)."""
    if isinstance(text, bool):
        text = "true" if text else "false"
    elif isinstance(text, (int, float)) and text == text and abs(text) != float("inf"):
        text = str(text)
    if not isinstance(text, str) or not text or _unprintable(text):
        _bad(f"a value must be non-empty text, a number or a boolean, got {text!r}",
             '"approved", 3, true')
    return ast.Value(text=text, kind="string")


def fact(key_text: object, value_text: object) -> ast.Fact:
    """`key = value`."""
    return ast.Fact(key=key(key_text), value=value(value_text))


def when(at_step: Optional[int], on: Optional[str],
         at: Optional[str] = None) -> Optional[ast.When]:
    """`at step N` or `at TIME` (knowledge time) or `on DATE` (valid time), or None for
    now."""
    if sum(x is not None for x in (at_step, on, at)) > 1:
        _bad("give one of at_step, at or on", "at_step=3, at=\"2026-03-01T09:00\", or "
             "on=\"2026-03-01\"")
    if at is not None and (not isinstance(at, str) or not at.strip()):
        _bad(f"at must be a time, got {at!r}", 'at="2026-03-01T09:00"')
    if at is not None:
        return ast.When(time=at)
    if at_step is not None and (isinstance(at_step, bool) or not isinstance(at_step, int)
                                or at_step < 0):
        _bad(f"at_step must be a step number (0 or more), got {at_step!r}", "at_step=3")
    if on is not None and (not isinstance(on, str) or not on.strip()):
        _bad(f"on must be a date, got {on!r}", 'on="2026-03-01"')
    if at_step is None and on is None:
        return None
    return ast.When(step=at_step, date=on)


def _unprintable(text: str) -> bool:
    return any(c in "\n\r\0" for c in text)


def _bad(message: str, example: str) -> None:
    raise DiagnosticError([Diagnostic("E143", message, None, PATH, hint=f"for example {example}")])
