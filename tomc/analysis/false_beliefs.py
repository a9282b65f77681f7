"""`false_beliefs [depth N]`: which perspectives are out of step with what they model.

A chain `a1 > ... > aN` models the perspective `a2 > ... > aN` (the truth, for N = 1: what
an omniscient observer holds, docs/semantics.md section 2). Its belief about a key is **false**
when both hold values and the values differ. Not knowing is not a false belief: a chain
that holds nothing, or models a perspective that holds nothing (the truth of a key only
ever spoken about, a speaker who never believed what it said), is left out; `who_knows`
lists such gaps. An ending is not a gap: a chain still holding a value the perspective it
models had closed by an ending (for N = 1: the truth or any agent, as `who_knows` counts
ended values; a retraction never changes the truth) holds a false belief, and the ending is
the event it missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import (BeliefView, Chain, EventInfo, by_chain_key, chain_text, shown,
                                values)


@dataclass(frozen=True)
class FalseBelief:
    """A chain holding `held` about `key` while the perspective it models holds `actual`.

    `since` is the step the chain adopted what it holds; `missed` are the events behind the
    modelled values the chain does not hold: for depth 1, the world events it did not see.
    """

    chain: Chain
    key: str
    held: tuple[str, ...]
    actual: tuple[str, ...]
    since: int
    missed: tuple[EventInfo, ...]

    @property
    def item(self) -> str:
        """`Maya: refund_4411.status`, as `expect false_beliefs` lists it."""
        return f"{chain_text(self.chain)}: {self.key}"


@dataclass
class FalseBeliefs:
    """Every false belief of the chains of `depth` agents, as of `step`."""

    depth: int
    step: int
    found: list[FalseBelief]
    many: frozenset[str]

    def items(self, part: Optional[str]) -> list[str]:
        """The expectation items: `CHAIN: KEY` for each false belief."""
        return [f.item for f in self.found]

    def lines(self) -> list[str]:
        """Report lines: one per false belief, with the event it missed."""
        if not self.found:
            return [f"no false beliefs at depth {self.depth}"]
        out = []
        for f in self.found:
            many = f.key in self.many
            modelled = "truth" if len(f.chain) == 1 else f"{chain_text(f.chain[1:])} believes"
            out.append(f"{chain_text(f.chain)} believes {f.key} = {shown(f.held, many)} "
                       f"(since step {f.since}); {modelled} {shown(f.actual, many)}")
            for e in f.missed:
                out.append(f"  missed step {e.step} (line {e.line}): {e.text}  "
                           f"[witnesses: {', '.join(e.witnesses) or 'none'}]")
        return out

    def to_json(self) -> dict:
        """{depth, step, false_beliefs: [{chain, key, held, actual, since, missed}]}."""
        return {"depth": self.depth, "step": self.step, "false_beliefs": [
            {"chain": list(f.chain), "key": f.key, "held": list(f.held),
             "actual": list(f.actual), "since": f.since,
             "missed": [e.to_json() for e in f.missed]} for f in self.found]}


def false_beliefs(view: BeliefView, depth: int, key: Optional[str] = None) -> FalseBeliefs:
    """The false beliefs of every chain of `depth` agents (1..policy depth), about every key
    or only `key`, as of the view's step (docs/semantics.md sections 2 and 4)."""
    chains = [c for c in view.scenario.chains() if len(c) == depth]
    modelled = sorted({c[1:] for c in chains})
    grouped = by_chain_key(h for h in view.held([*modelled, *chains])
                           if key is None or h.key == key)
    events = {e.step: e for e in view.events()}
    # What each modelled perspective had ended: {(chain, key): {value: step}}; depth 1
    # models the truth, which a retraction never reaches, so any agent's ending counts.
    agents = [(a,) for a in view.scenario.agents] if depth == 1 else []
    ended: dict[tuple, dict[str, int]] = {}
    for h in view.superseded([*modelled, *agents]):
        if h.ending is not None and (key is None or h.key == key):
            into = ended.setdefault((() if depth == 1 else h.chain, h.key), {})
            into[h.value] = max(into.get(h.value, 0), h.until)
    found = []
    for chain in chains:
        for chain_key in sorted({k for c, k in grouped if c == chain}):
            mine = grouped[(chain, chain_key)]
            theirs = grouped.get((chain[1:], chain_key), [])
            gone = {v: s for v, s in ended.get((chain[1:], chain_key), {}).items()
                    if v in values(mine) and v not in values(theirs)}
            if (not theirs and not gone) or values(mine) == values(theirs):
                continue
            missed = tuple(events[h.since] for h in theirs
                           if h.value not in values(mine) and h.since in events)
            missed += tuple(events[s] for s in sorted(set(gone.values())) if s in events)
            found.append(FalseBelief(chain, chain_key, values(mine), values(theirs),
                                     max(h.since for h in mine), missed))
    many = frozenset(k for k in {f.key for f in found} if view.scenario.policy.is_many(k))
    return FalseBeliefs(depth, view.step, found, many)
