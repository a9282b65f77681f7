"""Learned trust for the FalkorDB engine (docs/semantics.md section 4, "Learned trust").

Under `trust learned` a source's authority is its standing: the authority the policy
declares plus +1 for each settled dispute whose outcome confirmed its value and -1 for each
that contradicted it. A standing is a function of the claims and retractions before a step,
in step order, so the engine replays `scenario.events` (which a live session extends) up
to the event it compiles; nothing is stored in the graphs and a writer that attaches gets
the same standings. The reference interpreter keeps its own ledger
(tomc/reference/standing.py); the property and differential tests compare the two.

Shapes: `Standings(scenario)`; `.standing(source, step) -> Standing` (tomc/beliefs.py);
`.judged(event) -> event` with its `authority` replaced by the standing of its source (a
communication) or speaker (a handoff) at its step.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tomc.beliefs import Standing
from tomc.dsl.program import AnyEvent, Communication, Handoff, ScenarioModel

# The events whose claims make and settle disputes: statements about the world.
SETTLING = ("claim", "retract")


class Standings:
    """The ledger of one scenario, replayed lazily in step order."""

    def __init__(self, scenario: ScenarioModel):
        self.scenario = scenario
        self._reset()

    def _reset(self) -> None:
        self.done = 0  # how many of scenario.events the ledger has taken in
        self.changes: dict[str, list[tuple[int, int]]] = {}
        # Per key: the latest value each source claimed since the key was last settled.
        self.claims: dict[str, dict[str, str]] = {}

    def standing(self, source: Optional[str], step: int) -> Standing:
        """`source`'s standing for an event at `step`: settlements before `step` only."""
        self._replay(step)
        base = self.scenario.policy.authority(source)
        if source is None:
            return Standing("", base)
        return Standing(source, base, tuple((s, d) for s, d in self.changes.get(source, ())
                                            if s < step))

    def judged(self, event: AnyEvent) -> AnyEvent:
        """`event` with the authority it is resolved with (unchanged unless `trust learned`)."""
        if self.scenario.policy.trust != "learned":
            return event
        if isinstance(event, Communication):
            return dataclasses.replace(event, authority=self._value(event.source, event.step))
        if isinstance(event, Handoff):
            return dataclasses.replace(event, authority=self._value(event.speaker, event.step))
        return event

    def _value(self, source: Optional[str], step: int) -> int:
        return self.standing(source, step).value

    def _replay(self, step: int) -> None:
        events = self.scenario.events
        if self.done and (self.done > len(events) or events[self.done - 1].step >= step):
            self._reset()  # asked about an earlier step (a what-if): start again
        while self.done < len(events) and events[self.done].step < step:
            event = events[self.done]
            self.done += 1
            if (isinstance(event, Communication) and event.kind in SETTLING
                    and not event.fact.many):
                self._take(event)

    def _take(self, event: Communication) -> None:
        """One claim or retraction: it joins the key's dispute, or settles it."""
        fact, source, step = event.fact, event.source, event.step
        claims = self.claims.setdefault(fact.key, {})
        disputed = len(set(claims.values())) >= 2
        top = max((self._now(d, step) for d in claims), default=None)
        outranks = top is not None and self._now(source, step) > top
        if not fact.ended:
            if disputed and outranks:
                for disputant, value in claims.items():
                    self._learn(disputant, step, 1 if value == fact.value else -1)
                claims.clear()
            claims.pop(source, None)
            claims[source] = fact.value
            return
        ended = [d for d, v in claims.items() if (fact.value is None or v == fact.value)
                 and (fact.of is None or d == fact.of)]
        if disputed and (source in claims or outranks):
            for disputant in ended:
                self._learn(disputant, step, -1)
            claims.clear()
        else:
            for disputant in ended:
                del claims[disputant]

    def _now(self, source: str, step: int) -> int:
        """Standing during the replay (the ledger holds exactly the changes before `step`)."""
        return self.scenario.policy.authority(source) + sum(
            d for _, d in self.changes.get(source, ()))

    def _learn(self, source: str, step: int, delta: int) -> None:
        self.changes.setdefault(source, []).append((step, delta))
