"""`who_knows_best "TOPIC"`: agents ranked by what the memory holds about them and the topic.

The topic's words find versions as search does (tomc/search_text.py, tomc/analysis/
search.py). For each agent, from the current versions found, four counts, compared in this
order (a ranking a reader can redo by hand):

1. **named**: true values (the world's current versions) about the topic that name the agent
   (`redis.skilled = {Ananya, Dev}` names both), authorship aside;
2. **authored**: true values about the topic naming the agent under a predicate `author` or
   `owner` (`redis_runbook.author = Ananya`): a document about the topic the agent wrote;
3. **held**: the agent's own current beliefs about the topic, each weighted 1 + its source's
   authority when that is positive (a belief from an authority-3 source counts 4);
4. **latest**: the last step at which the agent adopted one of them (more recent first).

Agents equal on the first counts are ordered by the next one, and the answer says which
count broke each tie; agents equal on all four tie, said out loud, and are listed by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import BeliefView
from tomc.search_text import terms as query_terms

AUTHORSHIP = ("author", "owner")
COUNTS = ("named", "authored", "held", "latest")


@dataclass(frozen=True)
class Candidate:
    """One agent's counts, and the keys behind them."""

    agent: str
    named: int
    authored: int
    held: int
    latest: int
    evidence: tuple[str, ...]

    @property
    def order(self) -> tuple[int, ...]:
        return (self.named, self.authored, self.held, self.latest)

    def to_json(self) -> dict:
        """{agent, named, authored, held, latest, evidence}."""
        return {"agent": self.agent, "named": self.named, "authored": self.authored,
                "held": self.held, "latest": self.latest, "evidence": list(self.evidence)}


@dataclass
class Ranking:
    """Agents best first, and what decided each place (`ties`: sentences a reader reads)."""

    topic: str
    step: int
    ranking: list[Candidate]
    ties: list[str]

    def items(self, part: Optional[str]) -> list[str]:
        """`first`: the best agent, unless the top is a full tie (then none)."""
        if not self.ranking or (len(self.ranking) > 1
                                and self.ranking[0].order == self.ranking[1].order):
            return []
        return [self.ranking[0].agent]

    def lines(self) -> list[str]:
        """The ranking with its counts, then what broke or left each tie."""
        out = [f"who knows best about {self.topic!r} (compared in order: named, authored, "
               "held weighted by authority, latest step)"]
        for place, c in enumerate(self.ranking, 1):
            out.append(f"  {place}. {c.agent}: named {c.named}, authored {c.authored}, "
                       f"held {c.held}, latest step {c.latest}"
                       + (f"  [{'; '.join(c.evidence)}]" if c.evidence else ""))
        out += [f"  {t}" for t in self.ties]
        return out

    def to_json(self) -> dict:
        """{topic, step, order, ranking: [...], ties: [...]}."""
        return {"topic": self.topic, "step": self.step, "order": list(COUNTS),
                "ranking": [c.to_json() for c in self.ranking], "ties": self.ties}


def who_knows_best(view: BeliefView, topic: str) -> Ranking:
    """Every agent with a count above zero, best first (module docstring)."""
    found_terms = query_terms(topic, view.scenario.policy.aliases)
    agents = list(view.scenario.agents)
    rows = [h for h in view.found(found_terms, agents, True) if h.until is None] \
        if found_terms else []
    truth = [h for h in rows if h.chain == ()]
    candidates = []
    for agent in agents:
        naming = [h for h in truth if h.value == agent]
        authored = [h for h in naming if h.key.rsplit(".", 1)[-1] in AUTHORSHIP]
        named = [h for h in naming if h not in authored]
        held = [h for h in rows if h.chain == (agent,)]
        weight = sum(1 + max(0, h.authority) for h in held)
        if not (naming or held):
            continue
        evidence = tuple(sorted({f"{h.key} = {h.value}" for h in naming}))
        candidates.append(Candidate(agent, len(named), len(authored), weight,
                                    max((h.since for h in held), default=0), evidence))
    candidates.sort(key=lambda c: (tuple(-n for n in c.order), c.agent))
    return Ranking(topic, view.step, candidates, _ties(candidates))


def _ties(ranked: list[Candidate]) -> list[str]:
    """For each pair of neighbours that tie on the first count: the count that ordered
    them, or that they tie on every count."""
    out = []
    for upper, lower in zip(ranked, ranked[1:]):
        if upper.named != lower.named:
            continue
        broken = next((name for name, a, b in zip(COUNTS, upper.order, lower.order) if a != b),
                      None)
        if broken is None:
            out.append(f"tie: {upper.agent} and {lower.agent} are equal on every count "
                       "(listed by name)")
        else:
            out.append(f"{upper.agent} and {lower.agent} tie on named ({upper.named}); "
                       f"{broken} breaks it ({getattr(upper, broken)} against "
                       f"{getattr(lower, broken)})")
    return out
