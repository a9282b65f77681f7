"""`common_ground A, B`: the keys on which A and B agree and each knows the other agrees.

A key is common ground when the four perspectives `A`, `B`, `A > B` and `B > A` all hold
the same values (docs/semantics.md section 2; depth-2 common ground, which is what a policy of
depth 2 can represent). The chains `A`, `A > B` live in A's mind graph, `B`, `B > A` in B's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import BeliefView, by_chain_key, shown, values


@dataclass
class CommonGround:
    """The keys `agents` agree on as of `step`, each with the values agreed."""

    agents: tuple[str, str]
    step: int
    agreed: dict[str, tuple[str, ...]]
    many: frozenset[str]

    def items(self, part: Optional[str]) -> list[str]:
        """The keys of the common ground."""
        return list(self.agreed)

    def lines(self) -> list[str]:
        """One line per key agreed."""
        if not self.agreed:
            return ["no common ground"]
        return [f"{key} = {shown(v, key in self.many)}" for key, v in self.agreed.items()]

    def to_json(self) -> dict:
        """{agents, step, common_ground: {key: values}}."""
        return {"agents": list(self.agents), "step": self.step,
                "common_ground": {k: list(v) for k, v in self.agreed.items()}}


def common_ground(view: BeliefView, first: str, second: str) -> CommonGround:
    """The keys where `first`, `second`, `first > second` and `second > first` agree."""
    chains = [(first,), (second,), (first, second), (second, first)]
    grouped = by_chain_key(view.held(chains))
    agreed = {}
    for key in sorted({k for _, k in grouped}):
        held = [values(grouped.get((c, key), [])) for c in chains]
        if held[0] and all(h == held[0] for h in held):
            agreed[key] = held[0]
    many = frozenset(k for k in agreed if view.scenario.policy.is_many(k))
    return CommonGround((first, second), view.step, agreed, many)
