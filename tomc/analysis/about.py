"""`about SUBJECT [for CHAIN] [within N]`: everything held within N links of a subject.

A value `"@NAME"` links the fact's subject to the subject NAME
(`helios_pause.decided_in = "@helios_rfc"`). From SUBJECT, the walk takes the facts about
it (keys `SUBJECT.predicate`), then follows their links, and the links of other facts to it
(`X.p = "@SUBJECT"`), breadth first, up to N hops (default 2): each fact found comes with
its hop count and the path of subjects from SUBJECT, and its provenance (source, step).
Read from the current beliefs of the truth, or of CHAIN. Each engine walks on its own
(BeliefView.near): FalkorDB in one bounded-traversal read (read_near.cypher), the
reference over its held versions (tomc/reference/view.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import BeliefView, chain_text


@dataclass(frozen=True)
class Found:
    """A fact about a subject `hops` links away, reached by `path` (subjects from the
    start), with its source and the step it was adopted."""

    hops: int
    path: tuple[str, ...]
    key: str
    value: str
    source: Optional[str]
    since: int

    def to_json(self) -> dict:
        """{hops, path, key, value, source, step}."""
        return {"hops": self.hops, "path": list(self.path), "key": self.key,
                "value": self.value, "source": self.source, "step": self.since}


@dataclass
class About:
    """What `chain` (empty: the truth) holds within `within` links of `subject`."""

    subject: str
    chain: tuple[str, ...]
    within: int
    step: int
    found: list[Found]

    def items(self, part: Optional[str]) -> list[str]:
        """`keys`: the keys found."""
        return sorted({f.key for f in self.found})

    def lines(self) -> list[str]:
        """Each fact with its hop, path and provenance."""
        out = [f"about {self.subject} for {chain_text(self.chain)}, within {self.within} "
               f"link(s): {len(self.found)} fact(s)"]
        for f in self.found:
            came = f"from {f.source}, " if f.source else ""
            out.append(f"  {f.hops}  {' -> '.join(f.path)}: {f.key} = {f.value}  "
                       f"({came}step {f.since})")
        return out

    def to_json(self) -> dict:
        """{subject, chain, within, step, found: [...]}."""
        return {"subject": self.subject, "chain": list(self.chain), "within": self.within,
                "step": self.step, "found": [f.to_json() for f in self.found]}


def about(view: BeliefView, subject: str, chain: tuple[str, ...], within: int) -> About:
    """The facts within `within` links of `subject`, nearest first (module docstring): the
    view's walk (BeliefView.near), each fact once."""
    found, seen = [], set()
    for path, h in view.near(chain, subject, within):
        if (h.key, h.value) not in seen:
            seen.add((h.key, h.value))
            found.append(Found(len(path) - 1, path, h.key, h.value, h.source, h.since))
    return About(subject, chain, within, view.step, found)
