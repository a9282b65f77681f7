"""`explain [CHAIN] KEY follow N`: the evidence walk from a key through its links.

A value `"@NAME"` links a fact to the subject NAME (docs/language.md, "Links"). From the
values CHAIN (none: the truth) holds of KEY, the walk follows each link to the facts held
about its subject, and their links on, up to N links: the path from a decision to its
documents, each fact with its hop, the subjects it was reached through, and its provenance
(source, step, time). Each engine walks on its own: FalkorDB in one bounded-traversal read
(read_linked.cypher), the reference over its held versions (tomc/reference/view.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import BeliefView, Chain, chain_text
from tomc.beliefs import Held


@dataclass(frozen=True)
class Hop:
    """A fact on the walk, `len(path) - 1` links from the key, reached through `path`
    (subjects from the key's own)."""

    path: tuple[str, ...]
    belief: Held

    def to_json(self) -> dict:
        """{hops, path, chain, key, value, source, step, published, valid_from}."""
        b = self.belief
        return {"hops": len(self.path) - 1, "path": list(self.path), "chain": list(b.chain),
                "key": b.key, "value": b.value, "source": b.source, "step": b.since,
                "published": b.published, "valid_from": b.valid_from or None}


@dataclass
class Evidence:
    """The walk from `key` for `chain`, up to `follow` links, as of `step`."""

    chain: Chain
    key: str
    follow: int
    step: int
    hops: list[Hop]

    def items(self, part: Optional[str]) -> list[str]:
        """`keys`: the keys on the walk."""
        return sorted({h.belief.key for h in self.hops})

    def lines(self) -> list[str]:
        """Each fact with its hop, path and provenance, nearest first."""
        out = [f"explain {chain_text(self.chain)} {self.key} follow {self.follow}: "
               f"{len(self.hops)} fact(s)"]
        if not self.hops:
            out.append(f"  {chain_text(self.chain)} holds nothing about {self.key}")
        for h in self.hops:
            b = h.belief
            came = f"from {b.source}, " if b.source else ""
            when = f", valid from {b.valid_from}" if b.valid_from else ""
            out.append(f"  {len(h.path) - 1}  {' -> '.join(h.path)}: {b.key} = {b.value}  "
                       f"({came}step {b.since}{when})")
        return out

    def to_json(self) -> dict:
        """{chain, key, follow, step, hops: [...]}."""
        return {"chain": list(self.chain), "key": self.key, "follow": self.follow,
                "step": self.step, "hops": [h.to_json() for h in self.hops]}


def follow(view: BeliefView, chain: Chain, key: str, links: int) -> Evidence:
    """The walk from `key` up to `links` links (module docstring), nearest first."""
    hops = sorted((Hop(path, held) for path, held in view.linked(chain, key, links)),
                  key=lambda h: (len(h.path), h.path, h.belief.key, h.belief.value))
    return Evidence(chain, key, links, view.step, hops)
