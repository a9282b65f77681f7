"""The belief view: the few reads every analysis needs, whichever engine holds the beliefs.

The analyses (tomc/analysis/*.py) are written once, over this interface. It has two
implementations: `tomc.runtime.graph_view.GraphView` answers with Cypher reads of the
scenario's graphs on FalkorDB, and `tomc.reference.view.ReferenceView` reads the reference
interpreter's state. Both answer as of one step (knowledge time, docs/semantics.md section 4):
what was held after that step's event.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Iterable, Optional, Protocol, Sequence

from tomc.beliefs import COMMUNICATED, TRUTH, Chain, EventInfo, Held, Rival, Standing, ToldPath
from tomc.dsl.program import AnyEvent, ScenarioModel


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

    def linked(self, chain: Chain, key: str, follow: int) -> list[tuple[tuple[str, ...], Held]]:
        """The walk of `explain [CHAIN] KEY follow N` (tomc/analysis/follow.py): the versions
        `chain` holds of `key`, with the path `(S,)` (S: the key's subject); then, for each
        link value "@T" among them, the versions held about T (keys `T.p`) with path `(S, T)`;
        and so on through their links, up to `follow` links. Each subject is reached once, at
        its fewest links, by every path of that length (no subject twice on a path). Unordered."""

    def near(self, chain: Chain, subject: str,
             within: int) -> list[tuple[tuple[str, ...], Held]]:
        """The walk of `about SUBJECT [for CHAIN] within N` (tomc/analysis/about.py): breadth
        first from `subject`, up to `within` links; from each subject reached at one level,
        in the order they were reached, the subjects its facts link to ("@T"), then the
        subjects of the facts that link to it, each list in its facts' (key, value) order;
        a subject is reached once, by the first of those paths, `(subject, ..., T)`. The
        versions `chain` holds about each subject reached (keys `T.p`, or `T`), with its
        path: subjects in the order reached, a subject's versions by key and value."""

    def found(self, terms: tuple[str, ...], minds: Sequence[str], truth: bool) -> list[Held]:
        """The versions, held by `step` (current or closed), of every chain of the mind
        graphs of `minds` (and of the truth, if `truth`) whose words (key, value, source:
        tomc/search_text.py) match one of `terms`, each once per chain that stores it;
        without rivals (docs/language.md, "Search")."""

    def found_events(self, terms: tuple[str, ...]) -> list[EventInfo]:
        """The events of steps 1..`step` whose .tom text's words match one of `terms`."""

    def standing(self, source: str) -> Standing:
        """`source`'s standing after `step` (`trust learned`: docs/semantics.md section 4,
        "Learned trust"; under another trust mode, its declared authority)."""

    def simulate(self, events: Sequence[AnyEvent]) -> AbstractContextManager["BeliefView"]:
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
