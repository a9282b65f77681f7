"""Answers to `ask ready` and `expect ready`: can a procedure run, from a perspective?

A procedure's steps each require one key (docs/language.md, "Procedures"). Read from a
perspective (the truth or a chain) at a step or on a date, a step is

- `satisfied` when the perspective holds the required value (for a `many` key: the value is
  in its set), or, for `requires KEY`, any value;
- `blocked` when it holds values and the required one is not among them;
- `unknown` when it holds nothing about the key.

The verdict is `blocked` when any step is blocked (blocked wins over unknown: a known
obstacle is the answer, whatever else is missing), else `unknown` when any step is unknown,
else `ready`. FalkorDB computes statuses and verdict in Cypher (read_ready.cypher), the
reference interpreter in Python (`step_status`, `verdict_of`); the property tests compare
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence

from tomc.dsl.program import ReadyQuery, Requirement

Status = Literal["satisfied", "blocked", "unknown"]
Verdict = Literal["ready", "blocked", "unknown"]


def step_status(requirement: Requirement, values: Sequence[str]) -> Status:
    """The status of one step given the values the perspective holds about its key."""
    if not values:
        return "unknown"
    if requirement.value is None or requirement.value in values:
        return "satisfied"
    return "blocked"


def verdict_of(statuses: Sequence[Status]) -> Verdict:
    """`blocked` if any step is blocked, else `unknown` if any is unknown, else `ready`."""
    if "blocked" in statuses:
        return "blocked"
    return "unknown" if "unknown" in statuses else "ready"


@dataclass
class StepAnswer:
    """One step answered: the values held (sorted; empty: unknown), the sources supporting
    them and the highest authority among them (None when nothing is held), and the caveats:
    the contested rivals recorded against them."""

    requirement: Requirement
    status: Status
    values: list[str]
    sources: list[str] = field(default_factory=list)
    authority: Optional[int] = None
    caveats: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """{key, requires, status, values, sources, authority, caveats}; `requires` is None
        for `requires KEY` (any known value)."""
        return {"key": self.requirement.key, "requires": self.requirement.value,
                "status": self.status, "values": self.values, "sources": self.sources,
                "authority": self.authority, "caveats": self.caveats}


@dataclass
class ReadyAnswer:
    """The answer to `ask ready` / `expect ready`: the verdict and each step's answer, in
    the procedure's order. `passed` is None for an ask."""

    query: ReadyQuery
    verdict: Verdict
    steps: list[StepAnswer]
    passed: Optional[bool] = field(default=None, init=False)

    def __post_init__(self):
        query = self.query
        if query.kind == "expect":
            actual = {"verdict": [self.verdict], "blockers": self.blockers,
                      "unknown": self.unknown}[query.part]
            self.passed = sorted(set(actual)) == sorted(set(query.expected))

    @property
    def blockers(self) -> list[str]:
        """The keys of the blocked steps, in order, each once."""
        return list(dict.fromkeys(s.requirement.key for s in self.steps
                                  if s.status == "blocked"))

    @property
    def unknown(self) -> list[str]:
        """The keys of the unknown steps, in order, each once."""
        return list(dict.fromkeys(s.requirement.key for s in self.steps
                                  if s.status == "unknown"))

    @property
    def shown(self) -> str:
        """One line a reader asked: `ready`, or `blocked: qa.signoff = pending, not signed`
        (the steps of the verdict, each with what is held)."""
        if self.verdict == "ready":
            return "ready"
        reasons = [_reason(s) for s in self.steps if s.status == self.verdict]
        return f"{self.verdict}: " + "; ".join(reasons)

    def lines(self) -> list[str]:
        """The evidence, one line per step: its status, the values held, their sources and
        authority, and the caveats (contested rivals)."""
        out = []
        for step in self.steps:
            held = ", ".join(step.values) if step.values else "nothing"
            line = f"{step.status:<9} {step.requirement.text}: holds {held}"
            if step.values:
                line += f"  [sources: {', '.join(step.sources) or 'observed'}; " \
                        f"authority {step.authority}]"
            if step.caveats:
                line += f"  caveat: contested by {', '.join(step.caveats)}"
            out.append(line)
        return out

    def to_json(self) -> dict:
        """The machine form used by `--json` and the API."""
        q = self.query
        return {"kind": q.kind, "line": q.line, "text": q.text, "ready": q.procedure.name,
                "chain": list(q.chain), "step": q.step, "on": q.on_date,
                "verdict": self.verdict, "blockers": self.blockers, "unknown": self.unknown,
                "steps": [s.to_json() for s in self.steps],
                "part": q.part, "expected": list(q.expected) if q.kind == "expect" else None,
                "passed": self.passed}


def _reason(step: StepAnswer) -> str:
    key, wanted = step.requirement.key, step.requirement.value
    if step.status == "unknown":
        return f"{key} unknown"
    return f"{key} = {', '.join(step.values)}, not {wanted}"
