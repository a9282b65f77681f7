"""`who_knows KEY`: every agent, up to date with the truth, out of date, or unknown.

An agent is **up to date** when it holds exactly the truth's values, **out of date** when it
holds a value the truth does not (listed with what it holds and since when), **incomplete**
when it holds some of a `many` key's values and nothing else (it lacks the rest: nothing it
holds is wrong), **unknown** when it holds nothing.
When the truth itself is unknown (the key was only ever spoken about: speech never changes
the truth, docs/semantics.md section 2), an agent holding a value is **unverified**.

Endings (docs/semantics.md section 4) count as news: a value the truth or an agent held
until an ending closed it, and the truth does not hold now, is **ended**. An agent still
holding an ended value is out of date (even when the truth is unknown: a retraction never
changes the truth); when the truth holds nothing, an agent holding nothing that had its own
version ended knows it ended, and is up to date.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import TRUTH, BeliefView, EventInfo, by_chain_key, shown, values


@dataclass(frozen=True)
class Holder:
    """An agent holding `values` about the key since step `since`."""

    agent: str
    values: tuple[str, ...]
    since: int


@dataclass
class WhoKnows:
    """Who knows `key` as of `step`: the truth (with the event behind it) and five groups."""

    key: str
    step: int
    many: bool
    truth: tuple[str, ...]
    truth_events: tuple[EventInfo, ...]
    up_to_date: list[str]
    out_of_date: list[Holder]
    incomplete: list[Holder]
    unknown: list[str]
    unverified: list[Holder]

    def items(self, part: Optional[str]) -> list[str]:
        """The agents of one group: up_to_date, out_of_date, incomplete, unknown or
        unverified."""
        group = getattr(self, part)
        return [h.agent if isinstance(h, Holder) else h for h in group]

    def lines(self) -> list[str]:
        """Report lines: the truth, then each group."""
        out = [f"truth: {self.key} = {shown(self.truth, self.many)}"]
        out += [f"  from step {e.step} (line {e.line}): {e.text}" for e in self.truth_events]
        out.append(f"up to date: {', '.join(self.up_to_date) or 'nobody'}")
        for label, holders in (("out of date", self.out_of_date),
                               ("incomplete", self.incomplete),
                               ("unverified", self.unverified)):
            if holders:
                out.append(f"{label}: " + ", ".join(
                    f"{h.agent} ({shown(h.values, self.many)} since step {h.since})"
                    for h in holders))
        out.append(f"unknown: {', '.join(self.unknown) or 'nobody'}")
        return out

    def to_json(self) -> dict:
        """{key, step, truth, truth_events, up_to_date, out_of_date, incomplete, unknown,
        unverified}."""
        def holders(group: list[Holder]) -> list[dict]:
            return [{"agent": h.agent, "values": list(h.values), "since": h.since}
                    for h in group]
        return {"key": self.key, "step": self.step, "truth": list(self.truth),
                "truth_events": [e.to_json() for e in self.truth_events],
                "up_to_date": self.up_to_date, "out_of_date": holders(self.out_of_date),
                "incomplete": holders(self.incomplete), "unknown": self.unknown, "unverified": holders(self.unverified)}


def who_knows(view: BeliefView, key: str) -> WhoKnows:
    """Sort every agent of the scenario by what it holds about `key` against the truth."""
    agents = view.scenario.agents
    grouped = by_chain_key(h for h in view.held([TRUTH, *((a,) for a in agents)]) if h.key == key)
    truth_versions = grouped.get((TRUTH, key), [])
    truth = values(truth_versions)
    events = {e.step: e for e in view.events()}
    result = WhoKnows(key, view.step, view.scenario.policy.is_many(key), truth,
                      tuple(events[h.since] for h in truth_versions if h.since in events),
                      [], [], [], [], [])
    closed = [h for h in view.superseded([TRUTH, *((a,) for a in agents)])
              if h.key == key and h.ending is not None]
    ended = {h.value for h in closed} - set(truth)
    knows_ended = {h.chain[0] for h in closed if h.chain}
    for agent in agents:
        versions = grouped.get(((agent,), key), [])
        if not versions:
            if not truth and ended and agent in knows_ended:
                result.up_to_date.append(agent)
            else:
                result.unknown.append(agent)
        elif values(versions) == truth:
            result.up_to_date.append(agent)
        else:
            held = values(versions)
            holder = Holder(agent, held, max(h.since for h in versions))
            if set(held) & ended:
                result.out_of_date.append(holder)
            elif not truth:
                result.unverified.append(holder)
            elif result.many and set(held) < set(truth):
                result.incomplete.append(holder)
            else:
                result.out_of_date.append(holder)
    return result
