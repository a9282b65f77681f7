"""`describe`: what a memory (or a scenario) has, for someone who does not know its names yet.

Its agents and rooms, the sources its policy gives an authority, its procedures, the keys
events have written so far (how many events wrote each, and the last step), the policy's
name and depth, the aliases it declares, and the aliases it might: subjects and agents
whose names are one name but for case, punctuation or a plural `s`/`es` (`Asha`, `asha`;
`refund`, `refunds`), folded by rapidfuzz's `default_process`. Read from the scenario's
declarations and events, so every engine answers alike; for a session reading as an
agent, from the events that agent witnessed only (its `Session.scenario`), so no key only
another mind heard of is named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    aliases: dict[str, list[str]] = field(default_factory=dict)  # subject -> its aliases
    suggested: list[list[str]] = field(default_factory=list)  # names that may be one

    def to_json(self) -> dict:
        """{name, policy, depth, step, agent, agents, rooms, sources: {name: authority},
        procedures: {name: [requires ...]}, keys: [{key, events, last_step}], aliases:
        {subject: [alias, ...]}, suggested_aliases: [[name, name, ...], ...]}."""
        return {"name": self.name, "policy": self.policy, "depth": self.depth,
                "step": self.step, "agent": self.agent, "agents": self.agents,
                "rooms": self.rooms, "sources": self.sources, "procedures": self.procedures,
                "keys": [vars(k) for k in self.keys], "aliases": self.aliases,
                "suggested_aliases": self.suggested}

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
        out += [f"alias {subject} = {', '.join(aliases)}"
                for subject, aliases in self.aliases.items()]
        out += [f"maybe one subject: {', '.join(names)} (declare `alias {names[0]} = "
                f"{', '.join(names[1:])}` in the policy)" for names in self.suggested]
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
        sorted(written.values(), key=lambda k: k.key), _declared(policy.aliases),
        suggested_aliases([*scenario.agents, *(k.rpartition(".")[0] for k in written)]))


def _declared(aliases: dict[str, str]) -> dict[str, list[str]]:
    """{subject: [alias, ...]} of a policy's `alias` declarations."""
    out: dict[str, list[str]] = {}
    for alias, subject in aliases.items():
        out.setdefault(subject, []).append(alias)
    return dict(sorted(out.items()))


def suggested_aliases(names) -> list[list[str]]:
    """The groups of two or more distinct `names` that fold to one name: lowercased, every
    run of other characters than letters and digits left out (rapidfuzz's
    `default_process`), and read with or without a plural `s` or `es` ending (a stem of 3
    characters or more). Each group sorted; the groups by their first name."""
    from rapidfuzz.utils import default_process  # 20 ms to import: only when asked
    owner: dict[str, str] = {}  # a folded form -> the first name that has it
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for name in dict.fromkeys(names):
        folded = default_process(name).replace(" ", "")
        if not folded:
            continue
        parent.setdefault(name, name)
        forms = {folded} | {folded[:-len(e)] for e in ("s", "es")
                            if folded.endswith(e) and len(folded) - len(e) >= 3}
        for form in forms:
            if form in owner:
                parent[root(name)] = root(owner[form])
            else:
                owner[form] = name
    groups: dict[str, set[str]] = {}
    for name in parent:
        groups.setdefault(root(name), set()).add(name)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)
