"""Answers to `expect` and `ask`, whichever engine computed them (FalkorDB or reference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tomc.dsl.program import QueryModel


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
    passed: Optional[bool] = field(default=None, init=False)

    def __post_init__(self):
        self.passed = expectation_holds(self)

    @property
    def support(self) -> list[str]:
        """The sources supporting the values held, sorted."""
        return sorted({s for p in self.provenance for s in p.support})

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
            "passed": self.passed, "contested": self.contested, "support": self.support,
            "on": q.on_date,
            "provenance": [vars(p) for p in self.provenance],
        }


def expectation_holds(answer: Answer) -> Optional[bool]:
    """None for an ask; for an expect, whether the aspect it names equals what it expects:
    the values held, the contested rivals, or the supporting sources (as sets)."""
    query = answer.query
    if query.kind != "expect":
        return None
    actual = {"value": answer.values, "contested": answer.contested,
              "supported": answer.support}[query.aspect]
    return sorted(set(query.expected)) == sorted(set(actual))
