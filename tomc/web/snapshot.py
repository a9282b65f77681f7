"""What the console shows of a memory at one step (now, or a past step: a replay), read
through the Session and the analyses the CLI and MCP use:

    supervisor(session, at_step) -> {"step", "latest", "agent": None, "events",
        "out_of_date": [{"agent", "false": [false belief json]}], "minds": [{"agent",
        "beliefs": [held json, with "false"]}], "told": [{"speaker", "listener", "keys"}],
        "versions": [{"key", "value", "source", "since", "until", "published", "valid_from",
        "rivals"}], "readiness": [{"procedure", "for", "verdict"}], "handoffs": [event json, with
        "receipt": the handoff's receipt, as GET /handoff answered just before it]}
    agent(session, at_step) -> the same keys, from that agent's own mind only (its chains,
        the events it witnessed); no one else's mind, no truth, no false beliefs, no
        receipts (they read the sender's and the receiver's minds).
    last_false_step(session, latest) -> the last step an agent held a false belief, or None
"""

from __future__ import annotations

from typing import Optional

from tomc.analysis.false_beliefs import false_beliefs
from tomc.analysis.handoff import handoff
from tomc.api import Session
from tomc.wire import event_json, held_json

TOLD = ("tell", "says", "announce", "handoff", "retract")


def supervisor(session: Session, at_step: Optional[int]) -> dict:
    """The whole memory as of `at_step` (None: now)."""
    session.refresh()
    latest = session.step
    view = session.view(at_step)
    step = view.step
    events = [e for e in session.history() if e.step <= step]
    found = false_beliefs(view, 1).to_json()["false_beliefs"]
    agents = list(session.scenario.agents)
    wrong = {a: [f for f in found if f["chain"][0] == a] for a in agents}
    order = sorted(agents, key=lambda a: (-len(wrong[a]), agents.index(a)))
    false_keys = {(f["chain"][0], f["key"]) for f in found}
    minds = []
    for agent in order:
        held = sorted(view.held([(agent,)]), key=lambda h: (h.key, h.value))
        minds.append({"agent": agent, "beliefs": [
            {**held_json(h), "false": (agent, h.key) in false_keys} for h in held]})
    truth = [*view.held([()]), *view.superseded([()])]
    return {"step": step, "latest": latest, "agent": None,
            "events": [event_json(e) for e in events],
            "out_of_date": [{"agent": a, "false": wrong[a]} for a in order if wrong[a]],
            "minds": minds, "told": _told(events), "versions": _versions(truth, events),
            "readiness": _readiness(session, [None, *agents], step),
            "handoffs": [{**event_json(e), "receipt": _receipt(session, e)}
                         for e in events if e.kind == "handoff"]}


def agent(session: Session, at_step: Optional[int]) -> dict:
    """What `session.agent` may see as of `at_step`: its own mind and its models of the
    others (chains that start with it), the events it witnessed."""
    me = session.agent
    session.refresh()
    latest = session.step
    step = latest if at_step is None else at_step
    events = [e for e in session.history() if e.step <= step]
    chains = [c for c in session.scenario.chains() if c and c[0] == me]
    minds = [{"agent": " > ".join(c), "beliefs": [
        {**held_json(h), "false": False} for h in session.beliefs(list(c), at_step=step)]}
        for c in chains]
    return {"step": step, "latest": latest, "agent": me,
            "events": [event_json(e) for e in events], "out_of_date": [], "minds": minds,
            "told": _told(events), "versions": [],
            "readiness": _readiness(session, [me], step),
            "handoffs": [{**event_json(e), "receipt": None}
                         for e in events if e.kind == "handoff"]}


def last_false_step(session: Session, latest: int, after: int = 0,
                    found: Optional[int] = None) -> Optional[int]:
    """The last step from `latest` down to `after` + 1 after which an agent held a false
    belief (depth 1, as **Out of date** lists them), else `found` (the answer up to
    `after`). Newest first: a memory whose latest step has one costs one read."""
    for step in range(latest, after, -1):
        if false_beliefs(session.view(step), 1).found:
            return step
    return found


def _receipt(session: Session, event) -> dict:
    """The receipt of a handoff event: what `handoff SENDER -> RECEIVER` answered just
    before it (tomc/analysis/handoff.py), so what it sent and what it left out, and why."""
    return handoff(session.view(event.step - 1), event.speaker, event.listeners[0]).to_json()


def _told(events) -> list[dict]:
    """Who told whom: one edge per (speaker, listener), with the keys, in first-told order."""
    edges: dict[tuple[str, str], list[str]] = {}
    for e in events:
        speaker = getattr(e, "speaker", None)
        fact = getattr(e, "fact", None)
        if e.kind not in TOLD or not speaker:
            continue
        for listener in sorted(e.witnesses):
            if listener != speaker:
                keys = edges.setdefault((speaker, listener), [])
                label = fact.key if fact is not None else e.kind
                if label not in keys:
                    keys.append(label)
    return [{"speaker": s, "listener": l, "keys": k} for (s, l), k in edges.items()]


def _versions(truth, events) -> list[dict]:
    """Each value the world held, with the step it came and went (knowledge time) and the
    claim's publication and validity (valid time); rivals: what contested it."""
    by_step = {e.step: e for e in events}
    out = []
    for h in sorted(truth, key=lambda h: (h.key, h.since, h.value)):
        event = by_step.get(h.since)
        out.append({"key": h.key, "value": h.value, "source": h.source, "since": h.since,
                    "until": h.until, "kind": h.kind,
                    "published": getattr(event, "published", None),
                    "valid_from": getattr(event, "valid_from", None),
                    "rivals": [{"value": r.value, "source": r.source, "step": r.step}
                               for r in h.rivals]})
    return out


def _readiness(session: Session, whose, step: int) -> list[dict]:
    """Each procedure's verdict for each perspective in `whose` (None: the truth)."""
    out = []
    for procedure in session.scenario.procedures:
        for chain in whose:
            verdict = session.ready(procedure, for_=chain, at_step=step).to_json()
            out.append({"procedure": procedure, "for": chain or "truth",
                        "verdict": verdict.get("verdict"),
                        "blockers": verdict.get("blockers", [])})
    return out
