"""`plan_announcements KEY by S`: tell each misinformed agent privately, or announce once?

S can only pass on what S believes: the values S holds about KEY. An agent is
**misinformed** when it holds values about KEY other than S's. Two plans are compared (when
S holds nothing, both send nothing, leave what is, and neither is best):

- **private**: S tells each misinformed agent each of S's values (`S tells A KEY = v`);
- **announce**: S announces each of its values once (`S announces KEY = v`).

Each plan is simulated on a copy of the current state (on FalkorDB: GRAPH.COPY forks of the
scenario's graphs, dropped afterwards), routed by the scenario's own policy, and the false
beliefs about KEY left at every depth 1..policy depth are counted (tomc/analysis/
false_beliefs.py). The best plan leaves fewer false beliefs, compared depth 1 first, then
depth 2, ...; on a tie, the one with fewer messages; then the private plan (it tells fewer
agents). When S holds nothing about KEY there is nothing to plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.false_beliefs import false_beliefs
from tomc.analysis.view import BeliefView, by_chain_key, shown, values
from tomc.dsl.program import Communication, Fact


@dataclass
class PlanOutcome:
    """One plan: the events it simulates and the false beliefs about the key left after
    them, per depth."""

    name: str
    events: list[Communication]
    left: dict[int, int]

    @property
    def messages(self) -> int:
        """How many messages the plan sends: one per event."""
        return len(self.events)


@dataclass
class AnnouncementPlan:
    """The two plans for `speaker` to spread its `values` of `key`, as of `step`."""

    key: str
    speaker: str
    step: int
    values: tuple[str, ...]
    many: bool
    misinformed: list[str]
    before: dict[int, int]
    plans: list[PlanOutcome]
    best: Optional[str]

    def items(self, part: Optional[str], plan: Optional[str] = None,
              depth: Optional[int] = None) -> list[str]:
        """best: the best plan; tells: who the private plan tells; left: the count of
        false beliefs `plan` leaves at `depth`."""
        if part == "best":
            return [self.best] if self.best else []
        if part == "tells":
            return self.misinformed
        outcome = next(p for p in self.plans if p.name == plan)
        return [str(outcome.left[depth])] if depth in outcome.left else []

    def lines(self) -> list[str]:
        """Report lines: the speaker's value, who is misinformed, each plan's counts."""
        if not self.values:
            return [f"{self.speaker} holds nothing about {self.key}: nothing to announce"]
        out = [f"{self.speaker} holds {self.key} = {shown(self.values, self.many)}; "
               f"misinformed: {', '.join(self.misinformed) or 'nobody'}",
               f"false beliefs about {self.key} now: {_counts(self.before)}"]
        for p in self.plans:
            out.append(f"{p.name}: {p.messages} message(s); left: {_counts(p.left)}")
            out += [f"  {e.text}" for e in p.events]
        out.append(f"best: {self.best}")
        return out

    def to_json(self) -> dict:
        """{key, speaker, step, values, misinformed, before, plans: [{name, messages,
        events, left}], best}; counts are keyed by depth."""
        return {"key": self.key, "speaker": self.speaker, "step": self.step,
                "values": list(self.values), "misinformed": self.misinformed,
                "before": {str(d): n for d, n in self.before.items()},
                "plans": [{"name": p.name, "messages": p.messages,
                           "events": [e.text for e in p.events],
                           "left": {str(d): n for d, n in p.left.items()}} for p in self.plans],
                "best": self.best}


def _counts(left: dict[int, int]) -> str:
    return ", ".join(f"depth {d}: {n}" for d, n in sorted(left.items()))


def plan_announcements(view: BeliefView, key: str, speaker: str) -> AnnouncementPlan:
    """Compare private tells with one announcement of `speaker`'s values of `key`."""
    scenario = view.scenario
    grouped = by_chain_key(h for h in view.held([(a,) for a in scenario.agents]) if h.key == key)
    spoken = values(grouped.get(((speaker,), key), []))
    misinformed = [a for a in scenario.agents if a != speaker
                   and values(grouped.get(((a,), key), [])) not in ((), spoken)]
    depths = range(1, scenario.policy.depth + 1)

    def count(v: BeliefView) -> dict[int, int]:
        return {d: len(false_beliefs(v, d, key).found) for d in depths}

    result = AnnouncementPlan(key, speaker, view.step, spoken, scenario.policy.is_many(key),
                              misinformed, count(view), [], None)
    private = [(listener, value) for listener in misinformed for value in spoken]
    announced = [(None, value) for value in spoken]
    for name, messages in (("private", private), ("announce", announced)):
        events = [_message(view, key, speaker, listener, value, view.step + i + 1)
                  for i, (listener, value) in enumerate(messages)]
        if events:
            with view.simulate(events) as after:
                left = count(after)
        else:
            left = dict(result.before)
        result.plans.append(PlanOutcome(name, events, left))
    if spoken:
        result.best = min(result.plans, key=lambda p: (
            [p.left[d] for d in depths], p.messages, p.name != "private")).name
    return result


def _message(view: BeliefView, key: str, speaker: str, listener: Optional[str], value: str,
             step: int) -> Communication:
    """`speaker tells listener key = value`, or `speaker announces key = value` (no
    listener: every other agent hears it), as the checker would have built it."""
    policy = view.scenario.policy
    text = (f"{speaker} tells {listener} {key} = {value}" if listener
            else f"{speaker} announces {key} = {value}")
    listeners = (listener,) if listener else tuple(
        a for a in view.scenario.agents if a != speaker)
    return Communication(step=step, kind="tell" if listener else "announce", text=text, line=0,
                         witnesses=(speaker, *listeners), speaker=speaker, listeners=listeners,
                         source=speaker, authority=policy.authority(speaker),
                         fact=Fact(key, value, policy.is_many(key)))
