"""Learned trust in the reference interpreter (docs/semantics.md section 4, "Learned
trust"), stated on its own: the FalkorDB engine has its ledger in
tomc/compiler/standing.py, and the tests compare them.

`Ledger.record(step, key, value, source, ended, of)` takes each claim and retraction
of a cardinality-one key as it happens; `Ledger.standing(source, step)` is the source's
standing (tomc/beliefs.py `Standing`) for an event at `step`. The ledger keeps, per key,
the open dispute as a list of (source, value) pairs, a source appearing once with its
latest value, and the settlements as log entries (step, source, delta).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tomc.beliefs import Standing


@dataclass
class Ledger:
    """Settlements so far and each key's open claims; `authorities` is the policy's."""

    authorities: dict[str, int]
    log: list[tuple[int, str, int]] = field(default_factory=list)
    open: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def standing(self, source: Optional[str], step: int) -> Standing:
        """Declared authority plus what `source` learned at steps before `step`."""
        if source is None:
            return Standing("", 0)
        return Standing(source, self.authorities.get(source, 0),
                        tuple((s, d) for s, who, d in self.log if who == source and s < step))

    def record(self, step: int, key: str, value: Optional[str], source: str, ended: bool,
               of: Optional[str]) -> None:
        """A claim (`ended`: an ending; a retraction is an ending `of` its speaker)."""
        pairs = self.open.get(key, [])
        values = {v for _, v in pairs}
        rank = {who: self.standing(who, step + 1).value for who, _ in pairs}
        settles = len(values) > 1 and (
            self.standing(source, step + 1).value > max(rank.values())
            or (ended and source in rank))
        if ended:
            hit = [(who, v) for who, v in pairs
                   if (value is None or v == value) and (of is None or who == of)]
            if settles:
                self.log += [(step, who, -1) for who, _ in hit]
                self.open[key] = []
            else:
                self.open[key] = [p for p in pairs if p not in hit]
            return
        if settles:
            self.log += [(step, who, 1 if v == value else -1) for who, v in pairs]
            pairs = []
        self.open[key] = [p for p in pairs if p[0] != source] + [(source, value)]
