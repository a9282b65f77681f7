"""`describe`: what a memory (or a scenario) has, for someone who does not know its names yet.

Its agents and rooms, the sources its policy gives an authority, its procedures, the keys
events have written so far (how many events wrote each, and the last step), the policy's
name and depth. Read from the scenario's declarations and events, so every engine answers
alike; for a session reading as an agent, from the events that agent witnessed only (its
`Session.scenario`), so no key only another mind heard of is named.
"""

from __future__ import annotations

from dataclasses import dataclass

from tomc.dsl.program import ScenarioModel


@dataclass(frozen=True)
class KeyWritten:
    """A key, how many events wrote it (values and endings), the last one's step."""

    key: str
    events: int
    last_step: int


@dataclass
class Description:
    """What `describe` answers (`agent`: who it is for, None: every mind)."""

    name: str
    policy: str
    depth: int
    step: int
    agent: str | None
    agents: list[str]
    rooms: list[str]
    sources: dict[str, int]
    procedures: dict[str, list[str]]
    keys: list[KeyWritten]

    def to_json(self) -> dict:
        """{name, policy, depth, step, agent, agents, rooms, sources: {name: authority},
        procedures: {name: [requires ...]}, keys: [{key, events, last_step}]}."""
        return {"name": self.name, "policy": self.policy, "depth": self.depth,
                "step": self.step, "agent": self.agent, "agents": self.agents,
                "rooms": self.rooms, "sources": self.sources, "procedures": self.procedures,
                "keys": [vars(k) for k in self.keys]}

    def lines(self) -> list[str]:
        """Report lines."""
        out = [f"{self.name}: policy {self.policy} (depth {self.depth}), step {self.step}"
               + (f", as {self.agent}" if self.agent else ""),
               f"agents: {', '.join(self.agents) or 'none'}",
               f"rooms: {', '.join(self.rooms) or 'none'}",
               "sources: " + (", ".join(f"{s} (authority {a})" for s, a in self.sources.items())
                              or "none declared")]
        for name, steps in self.procedures.items():
            out.append(f"procedure {name}: {'; '.join(steps)}")
        out.append(f"keys written: {len(self.keys)}")
        out += [f"  {k.key}  ({k.events} event(s), last at step {k.last_step})"
                for k in self.keys]
        return out


def describe(scenario: ScenarioModel, step: int, agent: str | None = None) -> Description:
    """The description of `scenario` at `step` (its events: those the reader may see)."""
    written: dict[str, KeyWritten] = {}
    for event in scenario.events:
        fact = getattr(event, "fact", None)
        if fact is None:
            continue
        seen = written.get(fact.key)
        written[fact.key] = KeyWritten(fact.key, (seen.events if seen else 0) + 1, event.step)
    policy = scenario.policy
    return Description(
        scenario.name, policy.name, policy.depth, step, agent, list(scenario.agents),
        list(scenario.rooms), dict(sorted(policy.authorities.items())),
        {name: [r.text for r in p.requires] for name, p in sorted(scenario.procedures.items())},
        sorted(written.values(), key=lambda k: k.key))
