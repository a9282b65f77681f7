"""What a belief view returns: the rows every analysis reads, whichever engine holds the
beliefs (tomc/analysis/view.py describes the view; tomc/runtime/graph_view.py and
tomc/reference/view.py produce these rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

Chain = tuple[str, ...]
TRUTH: Chain = ()
# Event kinds whose value reached the holder by someone speaking (a TOLD edge, if any).
COMMUNICATED = ("tell", "says", "announce", "claim", "handoff")


@dataclass(frozen=True)
class Rival:
    """A contested claim recorded against a belief (docs/semantics.md section 4): its value, the
    source and authority it came with, the step and the kind of event that brought it."""

    value: str
    source: Optional[str]
    authority: int
    step: int
    kind: str


@dataclass(frozen=True)
class Standing:
    """A source's standing under `trust learned` (docs/semantics.md section 4, "Learned
    trust"): its declared `authority` plus each settlement it took part in, `changes` as
    (step, +1 or -1) in step order; `value` is the sum, the authority a claim from the
    source has from the step after the last change."""

    source: str
    authority: int
    changes: tuple[tuple[int, int], ...] = ()

    @property
    def value(self) -> int:
        return self.authority + sum(delta for _, delta in self.changes)

    def text(self) -> str:
        """`vendor standing 3 (authority 2, +1 confirmed at step 5)`."""
        why = "".join(f", {delta:+d} {'confirmed' if delta > 0 else 'contradicted'} at step "
                      f"{step}" for step, delta in self.changes)
        return f"{self.source} standing {self.value} (authority {self.authority}{why})"


@dataclass(frozen=True)
class Ending:
    """What ended a version (docs/semantics.md section 4, "Endings"): the ending's `source`
    and `authority`, its publication time `published` and the end of the version's valid
    interval `valid_to` ("" for the beginning of time)."""

    source: Optional[str]
    authority: int
    published: Optional[str]
    valid_to: str


@dataclass(frozen=True)
class Held:
    """One version of a perspective's belief about a key, with its provenance.

    `chain` is the perspective (empty: the truth). The version held from step `since`
    until `until` (None: still held). `kind` and `rule` say which event kind and routing
    rule produced it; `source` is where the value came from (None: observed), `support`
    every source that corroborated it, `authority` the highest of theirs; `rivals` are the
    claims contested against it (by the view's step). `published` and `valid_from` are the
    value's publication time and the start of its valid interval (a handoff passes them on:
    docs/semantics.md section 3); `ending` is what ended it, for a version an ending closed
    by the view's step.
    """

    chain: Chain
    key: str
    value: str
    since: int
    until: Optional[int]
    kind: str
    rule: str
    source: Optional[str]
    support: tuple[str, ...]
    authority: int
    rivals: tuple[Rival, ...] = ()
    published: Optional[str] = None
    valid_from: str = ""
    ending: Optional[Ending] = None


@dataclass(frozen=True)
class EventInfo:
    """An event as provenance shows it: step, kind, .tom line and text, witnesses."""

    step: int
    kind: str
    text: str
    line: int
    witnesses: tuple[str, ...]

    def to_json(self) -> dict:
        """{step, kind, text, line, witnesses}."""
        return {"step": self.step, "kind": self.kind, "text": self.text, "line": self.line,
                "witnesses": list(self.witnesses)}


@dataclass(frozen=True)
class ToldPath:
    """Who told whom: `agents[i]` told `agents[i + 1]` at `steps[i]`."""

    agents: tuple[str, ...]
    steps: tuple[int, ...]

    @property
    def text(self) -> str:
        """`A > B > C`, as `expect explain ... path = A > B > C` writes it."""
        return " > ".join(self.agents)
