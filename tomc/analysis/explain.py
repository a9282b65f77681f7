"""`explain CHAIN KEY`: why a perspective holds what it holds.

For each value the chain holds: the event it was adopted from (step, .tom line, text) and
its witnesses, the routing rule, the sources that support it and the claims that contest
it, the value it superseded, and the who-told-whom path that brought it to the chain's
first agent. The path is read from the TOLD edges of the world graph (a path query on
FalkorDB): the tell of the adopting event, preceded by the first time its speaker heard
that value, preceded by the first time that teller heard it, and so on, as long as the
steps go back and no agent repeats; the longest such path. A value that was observed, or
came from a source with no speaking agent, has the one-agent path of its holder; one its
holder perceived by peeking says so (`Peeked`: overheard a conversation, or watched a room
unseen, at which event), read from the scenario's events, the same for both engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import (COMMUNICATED, BeliefView, Chain, EventInfo, Held, Rival,
                                Standing, ToldPath, chain_text)


@dataclass(frozen=True)
class Peeked:
    """How `agent` perceived the event at `step` it holds a value from, unseen: `overheard`
    (a conversation it was no listener of) or `watched` (a room it was outside)."""

    agent: str
    step: int
    how: str

    def text(self, event: Optional[EventInfo]) -> str:
        """`nobody: Ben overheard it, peeking, at step 4: Ann tells Cal k = v`."""
        verb = "overheard it" if self.how == "overheard" else "watched it unseen"
        said = f": {event.text}" if event else ""
        return f"nobody: {self.agent} {verb}, peeking, at step {self.step}{said}"

    def to_json(self) -> dict:
        return {"agent": self.agent, "step": self.step, "how": self.how}


@dataclass(frozen=True)
class Reason:
    """One value held, and its evidence."""

    belief: Held
    event: Optional[EventInfo]
    replaced: Optional[Held]
    path: ToldPath
    # `trust learned`: the standing of each source behind the value, as of the view's step.
    standings: tuple[Standing, ...] = ()
    # The chain's first agent perceived the adopting event by peeking (else None).
    peeked: Optional[Peeked] = None


@dataclass
class Explanation:
    """Why `chain` holds what it holds about `key` as of `step` (no reasons: unknown)."""

    chain: Chain
    key: str
    step: int
    reasons: list[Reason]

    def items(self, part: Optional[str]) -> list[str]:
        """from_step: the steps the values were adopted at; path: the paths, `A > B`."""
        if part == "from_step":
            return [str(r.belief.since) for r in self.reasons]
        return [r.path.text for r in self.reasons]

    def lines(self) -> list[str]:
        """Report lines per value: event, witnesses, sources, rivals, replaced, path."""
        if not self.reasons:
            return [f"{chain_text(self.chain)} holds nothing about {self.key}"]
        out = []
        for r in self.reasons:
            b = r.belief
            out.append(f"{b.key} = {b.value}, held since step {b.since} "
                       f"(rule: {b.rule})")
            if r.event:
                out.append(f"  event: step {r.event.step} (line {r.event.line}): "
                           f"{r.event.text}  [witnesses: {', '.join(r.event.witnesses) or 'none'}]")
            out.append(f"  supported by: {', '.join(b.support) or 'observation'} "
                       f"(authority {b.authority})")
            out += [f"  standing: {s.text()}" for s in r.standings]
            out += [f"  contested by: {_rival(x)}" for x in b.rivals]
            if r.replaced:
                out.append(f"  replaced: {r.replaced.value} (held from step "
                           f"{r.replaced.since})")
            if r.path.steps:
                steps = ", ".join(f"step {s}" for s in r.path.steps)
                out.append(f"  who told whom: {r.path.text} ({steps})")
            elif r.peeked:
                out.append(f"  who told whom: {r.peeked.text(r.event)}")
            else:
                out.append("  who told whom: nobody (observed, or from a source)")
        return out

    def to_json(self) -> dict:
        """{chain, key, step, values: [{value, since, kind, rule, event, source, support,
        authority, contested, replaced, path}]}; under `trust learned` each value also has
        standings: [{source, standing, authority, changes: [{step, delta}]}]; a value the
        chain's first agent perceived by peeking has peeked: {agent, step, how}."""
        return {"chain": list(self.chain), "key": self.key, "step": self.step, "values": [
            {"value": r.belief.value, "since": r.belief.since, "kind": r.belief.kind,
             "rule": r.belief.rule, "event": r.event.to_json() if r.event else None,
             "source": r.belief.source, "support": list(r.belief.support),
             "authority": r.belief.authority,
             "contested": [{"value": x.value, "source": x.source, "authority": x.authority,
                            "step": x.step} for x in r.belief.rivals],
             "replaced": ({"value": r.replaced.value, "since": r.replaced.since}
                          if r.replaced else None),
             "path": {"agents": list(r.path.agents), "steps": list(r.path.steps)},
             **({"standings": [_standing_json(s) for s in r.standings]}
                if r.standings else {}),
             **({"peeked": r.peeked.to_json()} if r.peeked else {})}
            for r in self.reasons]}


def _standing_json(standing: Standing) -> dict:
    return {"source": standing.source, "standing": standing.value,
            "authority": standing.authority,
            "changes": [{"step": step, "delta": delta} for step, delta in standing.changes]}


def _rival(rival: Rival) -> str:
    return (f"{rival.value} from {rival.source or 'an observation'} "
            f"(authority {rival.authority}, step {rival.step})")


def explain(view: BeliefView, chain: Chain, key: str) -> Explanation:
    """The evidence for each value `chain` holds about `key` as of the view's step."""
    events = {e.step: e for e in view.events()}
    closed = [h for h in view.superseded([chain]) if h.key == key]
    reasons = []
    for belief in sorted((h for h in view.held([chain]) if h.key == key), key=lambda h: h.value):
        replaced = next((h for h in closed if h.until == belief.since), None)
        reasons.append(Reason(belief, events.get(belief.since), replaced,
                              told_path(view, chain[0], belief), _standings(view, belief),
                              _peeked(view, chain[0], belief.since)))
    return Explanation(chain, key, view.step, reasons)


def _peeked(view: BeliefView, agent: str, step: int) -> Optional[Peeked]:
    """How `agent` perceived the event at `step` if it peeked at it: a conversation is
    overheard, anything seen in a room watched."""
    event = next((e for e in view.scenario.events if e.step == step), None)
    if event is None or agent not in getattr(event, "peekers", ()):
        return None
    return Peeked(agent, step, "overheard" if event.kind in COMMUNICATED else "watched")


def _standings(view: BeliefView, belief: Held) -> tuple[Standing, ...]:
    """Under `trust learned`, the standing of each source behind `belief` (a handed-over
    `SOURCE via S` is SOURCE's), once each."""
    if view.scenario.policy.trust != "learned":
        return ()
    sources = dict.fromkeys(s.split(" via ")[0] for s in belief.support)
    return tuple(view.standing(s) for s in sources)


def told_path(view: BeliefView, holder: str, belief: Held) -> ToldPath:
    """The who-told-whom path that brought `belief` to `holder` (see the module doc)."""
    if belief.kind in COMMUNICATED:
        paths = view.told_paths(holder, belief.key, belief.value, belief.since)
        if paths:
            return max(paths, key=lambda p: len(p.steps))
    return ToldPath((holder,), ())
