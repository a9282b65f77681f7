"""The belief view: the few reads every analysis needs, whichever engine holds the beliefs.

The analyses (tomc/analysis/*.py) are written once, over this interface. It has two
implementations: `tomc.runtime.graph_view.GraphView` answers with Cypher reads of the
scenario's graphs on FalkorDB, and `tomc.reference.view.ReferenceView` reads the reference
interpreter's state. Both answer as of one step (knowledge time, SEMANTICS.md section 4):
what was held after that step's event.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Iterable, Optional, Protocol, Sequence

from tomc.program import EventModel, ScenarioModel

Chain = tuple[str, ...]
TRUTH: Chain = ()
# Event kinds whose value reached the holder by someone speaking (a TOLD edge, if any).
COMMUNICATED = ("tell", "says", "announce", "claim", "handoff")


@dataclass(frozen=True)
class Rival:
    """A contested claim recorded against a belief (SEMANTICS.md section 4): its value, the
    source and authority it came with, the step and the kind of event that brought it."""

    value: str
    source: Optional[str]
    authority: int
    step: int
    kind: str


@dataclass(frozen=True)
class Held:
    """One version of a perspective's belief about a key, with its provenance.

    `chain` is the perspective (empty: the truth). The version held from step `since`
    until `until` (None: still held). `kind` and `rule` say which event kind and routing
    rule produced it; `source` is where the value came from (None: observed), `support`
    every source that corroborated it, `authority` the highest of theirs; `rivals` are the
    claims contested against it (by the view's step).
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


class BeliefView(Protocol):
    """What an analysis may read, as of `step`, for `scenario` (its agents and policy)."""

    scenario: ScenarioModel
    step: int

    def held(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions the chains hold at `step` (several per key for `many` keys)."""

    def superseded(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions the chains held once and had closed by `step`."""

    def events(self) -> list[EventInfo]:
        """Every event of steps 1..`step`, in order, with its witnesses."""

    def told_paths(self, holder: str, key: str, value: str, since: int) -> list[ToldPath]:
        """The who-told-whom paths of `key = value` that end with the tell to `holder` at
        step `since`, shortest first: that tell alone, then preceded by its speaker's first
        hearing of the value, then by that teller's first hearing, ..., as long as the steps
        go back and no agent repeats (tomc/analysis/explain.py)."""

    def simulate(self, events: Sequence[EventModel]) -> AbstractContextManager["BeliefView"]:
        """A view of the beliefs after `events` (numbered from `step` + 1) are applied to a
        copy of this state; the copy is dropped when the block ends. The view must be of the
        latest step of its state (a run's checkpoint, or a live session)."""


def by_chain_key(held: Iterable[Held]) -> dict[tuple[Chain, str], list[Held]]:
    """Versions grouped by (chain, key), each group sorted by value."""
    out: dict[tuple[Chain, str], list[Held]] = {}
    for h in sorted(held, key=lambda h: (h.chain, h.key, h.value)):
        out.setdefault((h.chain, h.key), []).append(h)
    return out


def values(versions: Iterable[Held]) -> tuple[str, ...]:
    """The sorted values of some versions: what a perspective believes about one key."""
    return tuple(sorted(h.value for h in versions))


def shown(values_held: Sequence[str], many: bool) -> str:
    """A belief as a reader writes it: `unknown`, `v`, or `{a, b}` for a `many` key."""
    if not values_held:
        return "unknown"
    return "{" + ", ".join(values_held) + "}" if many else values_held[0]


def chain_text(chain: Chain) -> str:
    """`A > B`, or `truth` for the empty chain."""
    return " > ".join(chain) if chain else "truth"
