"""Answers to `expect` and `ask`, whichever engine computed them (FalkorDB or reference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tomc.program import QueryModel


@dataclass
class Provenance:
    """Where a belief came from: the event (step, kind, .tom line and text) and witnesses."""

    step: int
    kind: str
    text: str
    line: int
    witnesses: list[str]
    source: Optional[str] = None
    support: list[str] = field(default_factory=list)
    rule: Optional[str] = None


@dataclass
class Answer:
    """The answer to one query: the values held (empty: unknown), with provenance.

    `passed` is None for an `ask`, else whether the expectation holds.
    """

    query: QueryModel
    values: list[str]
    provenance: list[Provenance] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    passed: Optional[bool] = None

    @property
    def shown(self) -> str:
        """The value as a reader writes it: `unknown`, `v`, or `{a, b}` for a set."""
        if not self.values:
            return "unknown"
        if self.query.many:
            return "{" + ", ".join(self.values) + "}"
        return self.values[0]

    def to_json(self) -> dict:
        """The machine form used by `--json`."""
        q = self.query
        return {
            "kind": q.kind, "line": q.line, "text": q.text,
            "chain": list(q.chain), "key": q.key, "step": q.step,
            "value": None if not self.values else (self.values if q.many else self.values[0]),
            "expected": (list(q.expected) if q.kind == "expect" else None),
            "passed": self.passed, "contested": self.contested,
            "provenance": [vars(p) for p in self.provenance],
        }


def expectation_holds(query: QueryModel, values: list[str]) -> Optional[bool]:
    """None for an ask; for an expect, whether the values held equal the expected ones."""
    if query.kind != "expect":
        return None
    return sorted(set(query.expected)) == sorted(set(values))
