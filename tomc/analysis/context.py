"""`context_for A talking_to B`: a compact text block for A's LLM prompt before talking to B.

Written from A's perspective only (the chains `A` and `A > B`, both in A's mind graph):
what I believe (and how I learnt it), what I think B believes, where the two differ, and
what to correct first. Each difference gets an action:

- `correct`: I think B holds a value other than mine, or one I know ended (an ending
  closed my own version of it: docs/semantics.md section 4);
- `tell`: I think B does not know what I hold;
- `ask`: I think B knows something I do not;
- `private`: I learnt my value in a private tell (kind `tell`): not mine to share.

Order: corrections, then tells, then asks, then private ones; within each, the value I
adopted last first (the change B most likely missed), then by key. "Correct first" is the
first correction or tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.handoff import is_private
from tomc.analysis.quoting import NOTICE, flag_note, quote, quoted_values
from tomc.analysis.view import BeliefView, Held, by_chain_key, values

_OBSERVED = ("state", "move", "set", "enter")
_ORDER = {"correct": 0, "tell": 1, "ask": 2, "private": 3}


def learnt(h: Held) -> str:
    """How a value reached its holder, in a few words: the source name quoted, with its
    authority (tomc/analysis/quoting.py)."""
    if h.kind in _OBSERVED:
        return f"seen at step {h.since}"
    source = quote(h.source or "")
    when = f"at step {h.since}, authority {h.authority}"
    if is_private(h.kind):
        return f"told privately by {source} {when}"
    if h.kind == "handoff":
        return f"handed over, from {source} {when}"  # the source `SOURCE via SENDER`
    if h.kind == "claim":
        return f"from {source} {when}"
    return f"heard from {source} {when}"


@dataclass(frozen=True)
class Difference:
    """A key where what I hold (`mine`) and what I think they hold (`theirs`) differ."""

    key: str
    mine: tuple[str, ...]
    theirs: tuple[str, ...]
    action: str
    since: int


@dataclass
class Context:
    """The context block for `agent` talking to `other` as of `step`, and its parts."""

    agent: str
    other: str
    step: int
    mine: list[Held]
    theirs: list[Held]
    differences: list[Difference]
    many: frozenset[str]

    @property
    def first(self) -> Optional[Difference]:
        """The first correction or tell, if any."""
        return next((d for d in self.differences if d.action in ("correct", "tell")), None)

    def items(self, part: Optional[str]) -> list[str]:
        """differ: the keys that differ; first: the key to correct first."""
        if part == "first":
            return [self.first.key] if self.first else []
        return [d.key for d in self.differences]

    @property
    def text(self) -> str:
        """The block itself, ready for a prompt: values and sources quoted, values that
        read like instructions flagged (tomc/analysis/quoting.py)."""
        out = [f"Context for {self.agent} talking to {self.other} (after step {self.step}; "
               f"{self.agent}'s own view). {NOTICE}", "What I believe:"]
        grouped = by_chain_key(self.mine)
        out += [f"- {key} = {quoted_values(values(v), key in self.many)} "
                f"({'; '.join(learnt(h) for h in v)}){flag_note(values(v))}"
                for (_, key), v in grouped.items()]
        if not grouped:
            out.append("- nothing yet")
        out.append(f"What I think {self.other} believes:")
        theirs = by_chain_key(self.theirs)
        out += [f"- {key} = {quoted_values(values(v), key in self.many)}{flag_note(values(v))}"
                for (_, key), v in theirs.items()]
        if not theirs:
            out.append("- nothing that I know of")
        out.append("Where we differ:")
        for d in self.differences:
            many = d.key in self.many
            mine, theirs_shown = quoted_values(d.mine, many), quoted_values(d.theirs, many)
            out.append({
                "correct": f"- {d.key}: I hold {mine if d.mine else 'nothing (it ended)'}; "
                           f"I think {self.other} holds {theirs_shown} (correct it)",
                "tell": f"- {d.key}: I hold {mine}; I think {self.other} does not know it "
                        f"(tell)",
                "ask": f"- {d.key}: I hold nothing; I think {self.other} holds "
                       f"{theirs_shown} (ask)",
                "private": f"- {d.key}: I hold {mine}, told to me in private (do not share)",
            }[d.action] + flag_note((*d.mine, *d.theirs)))
        if not self.differences:
            out.append("- nowhere that I know of")
        first = self.first
        if first:
            if first.mine:
                shown = quoted_values(first.mine, first.key in self.many)
                out.append(f"Correct first: {first.key} = {shown}")
            else:
                out.append(f"Correct first: {first.key} has ended")
        return "\n".join(out)

    def lines(self) -> list[str]:
        """The block, line by line."""
        return self.text.splitlines()

    def to_json(self) -> dict:
        """{agent, other, step, text, differences: [{key, mine, theirs, action}], first}."""
        return {"agent": self.agent, "other": self.other, "step": self.step,
                "text": self.text,
                "differences": [{"key": d.key, "mine": list(d.mine), "theirs": list(d.theirs),
                                 "action": d.action} for d in self.differences],
                "first": self.first.key if self.first else None}


def context_for(view: BeliefView, agent: str, other: str) -> Context:
    """The context block for `agent` about to talk to `other`, from `agent`'s mind only."""
    mine = [h for h in view.held([(agent,)])]
    theirs = [h for h in view.held([(agent, other)])]
    my_keys, their_keys = by_chain_key(mine), by_chain_key(theirs)
    ended = {(h.key, h.value) for h in view.superseded([(agent,)]) if h.ending is not None}
    differences = []
    for key in sorted({k for _, k in my_keys} | {k for _, k in their_keys}):
        held = my_keys.get(((agent,), key), [])
        modelled = their_keys.get(((agent, other), key), [])
        if values(held) == values(modelled):
            continue
        if any(is_private(h.kind) for h in held):
            action = "private"
        elif not held:
            known_ended = any((h.key, h.value) in ended for h in modelled)
            action = "correct" if known_ended else "ask"
        else:
            action = "correct" if modelled else "tell"
        differences.append(Difference(key, values(held), values(modelled), action,
                                      max((h.since for h in held), default=0)))
    differences.sort(key=lambda d: (_ORDER[d.action], -d.since, d.key))
    many = frozenset(k for k in {h.key for h in [*mine, *theirs]}
                     if view.scenario.policy.is_many(k))
    return Context(agent, other, view.step, mine, theirs, differences, many)
