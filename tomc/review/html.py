"""`tomc report FILE`: one self-contained HTML page that shows a run (no network, no script).

Sections, for a reviewer who looks for what is wrong: a summary first (the expectations
that failed, the false beliefs at the end, who is out of date, the readiness verdicts); the
timeline (each event, who witnessed it and who did not, and what it changed in which
chains); per key a grid of each chain's belief at each step where something changed (false
beliefs and contested values marked with a symbol and a word as well as a colour), the keys
the chains disagree about most first and those they agree on folded away; the answers to
every `expect` and `ask` with provenance (linked to the timeline, not repeated) and explain
paths; and for claims the supersede / corroborate / contest history per key with sources
and both clocks (the step it was known at, the time it was published and valid from). The data is read from each run right after it ends (`report_data`), then
one page is rendered for all the scenarios of a file (`render_page`, with
templates/report.html: Jinja2, autoescaped).

Shape of `report_data`: {scenario, path, policy, depth, engine, agents, rooms, steps,
passed, failed, summary: {failed, out_of_date, up_to_date, readiness}, timeline: [{step,
..., changes: [{key, before, after, chains}]}], keys: [{key, columns, disagreement, rows:
[{chain, cells: [...]}], silent}], false_beliefs: [...], answers: [...], claims: [{key,
rows: [...]}]}.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from jinja2 import Environment, PackageLoader, StrictUndefined

from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.explain import explain
from tomc.analysis.false_beliefs import false_beliefs
from tomc.analysis.view import chain_text, shown
from tomc.beliefs import Chain, Held
from tomc.dsl.program import ENDED, Communication
from tomc.readiness import ReadyAnswer
from tomc.runner import ScenarioRun


def render_page(file: str, engine: str, runs: list[dict]) -> str:
    """The HTML page of a file's runs, each given as its `report_data`."""
    return _environment().get_template("report.html").render(file=file, engine=engine,
                                                             runs=runs)


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(loader=PackageLoader("tomc.review", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def report_data(run: ScenarioRun, engine: str) -> dict:
    """Everything the page shows, as plain data (see the module doc)."""
    s = run.scenario
    steps = len(s.events)
    view = run.view(steps)
    chains: list[Chain] = [(), *s.chains()]
    history = [h for h in [*view.held(chains), *view.superseded(chains)]
               if h.until is None or h.until > h.since]
    beliefs = _Beliefs(history)
    events = view.events()
    found = [f for depth in range(1, s.policy.depth + 1)
             for f in false_beliefs(view, depth).found]
    grids = sorted((_key_grid(beliefs, key, chains, steps, s.policy.is_many(key))
                    for key in beliefs.keys()), key=lambda g: (-g["disagreement"], g["key"]))
    answers = [{**_answer(run, a), "index": i} for i, a in enumerate(run.answers, 1)]
    changes: dict[int, list[dict]] = {}
    for grid in grids:
        for change in grid.pop("changes"):
            changes.setdefault(change["step"], []).append(change)
    return {
        "scenario": s.name, "path": s.path, "policy": s.policy.name, "depth": s.policy.depth,
        "engine": engine, "agents": s.agents, "rooms": s.rooms, "steps": steps,
        "passed": sum(1 for a in run.answers if a.passed is True),
        "failed": sum(1 for a in run.answers if a.passed is False),
        "timeline": [{"step": e.step, "line": e.line, "kind": e.kind, "text": e.text,
                      "witnesses": list(e.witnesses),
                      "missed": [a for a in s.agents if a not in e.witnesses],
                      "changes": sorted(changes.get(e.step, []),
                                        key=lambda c: (c["key"], c["after"]))}
                     for e in events],
        "keys": grids,
        "summary": _summary(s.agents, found, answers),
        "false_beliefs": [{"chain": chain_text(f.chain), "key": f.key,
                           "held": shown(f.held, s.policy.is_many(f.key)),
                           "modelled": "the truth" if len(f.chain) == 1
                           else chain_text(f.chain[1:]),
                           "actual": shown(f.actual, s.policy.is_many(f.key)),
                           "since": f.since} for f in found],
        "answers": answers,
        "claims": _claims(run, beliefs),
    }


class _Beliefs:
    """Every version every chain held, by (chain, key)."""

    def __init__(self, history: list[Held]):
        self.by: dict[tuple[Chain, str], list[Held]] = {}
        for h in history:
            self.by.setdefault((h.chain, h.key), []).append(h)

    def keys(self) -> list[str]:
        return sorted({k for _, k in self.by})

    def at(self, chain: Chain, key: str, step: int) -> list[Held]:
        """The versions `chain` held about `key` after `step`, by value."""
        return sorted((h for h in self.by.get((chain, key), [])
                       if h.since <= step and (h.until is None or h.until > step)),
                      key=lambda h: h.value)

    def versions(self, chain: Chain, key: str) -> list[Held]:
        return sorted(self.by.get((chain, key), []), key=lambda h: (h.since, h.value))


def _summary(agents: list[str], found, answers: list[dict]) -> dict:
    """What a reviewer reads first: the expectations that failed, who is out of date (an
    agent with a depth-1 false belief at the end, and about which keys), and the verdicts
    of the readiness questions."""
    stale: dict[str, list[str]] = {}
    for f in found:
        if len(f.chain) == 1:
            stale.setdefault(f.chain[0], []).append(f.key)
    return {"failed": [a for a in answers if a["passed"] is False],
            "out_of_date": [{"agent": a, "keys": stale[a]} for a in agents if a in stale],
            "up_to_date": [a for a in agents if a not in stale],
            "readiness": [a for a in answers if a["ready"]]}


def _key_grid(beliefs: _Beliefs, key: str, chains: list[Chain], steps: int,
              many: bool) -> dict:
    """One row per chain that ever held a value about `key` (the truth first), one cell
    per step where some chain's value changed (and the last step): the value, and whether
    it is new, false (it differs from what the chain models: the truth, or the perspective
    after its first agent) or contested. `disagreement` counts the false and contested
    cells of every step (keys are shown most disagreed-about first); `changes` lists what
    changed at each step, the chains of one change together."""
    rows, silent = [], 0
    for chain in chains:
        if not beliefs.by.get((chain, key)):
            silent += 1
            continue
        cells, before = [], None
        for step in range(steps + 1):
            held = beliefs.at(chain, key, step)
            values = tuple(h.value for h in held)
            modelled = None
            if chain:
                theirs = tuple(h.value for h in beliefs.at(chain[1:], key, step))
                if theirs and values and theirs != values:
                    modelled = shown(theirs, many)
            rivals = sorted({f"{r.value} ({r.source or 'observed'}, authority {r.authority})"
                             for h in held for r in h.rivals if r.step <= step})
            cells.append({"value": shown(values, many) if values else "",
                          "changed": values != before, "false": modelled,
                          "contested": rivals,
                          "rule": held[0].rule if held else "",
                          "since": held[0].since if held else None})
            before = values
        rows.append({"chain": chain_text(chain), "depth": len(chain), "cells": cells})
    columns = [step for step in range(steps + 1)
               if step == steps or any(r["cells"][step]["changed"] for r in rows)]
    disagreement = sum(1 for r in rows for c in r["cells"] if c["false"] or c["contested"])
    changes: dict[tuple[int, str, str], list[str]] = {}
    for r in rows:
        for step in range(1, steps + 1):
            cell = r["cells"][step]
            if cell["changed"]:
                was = r["cells"][step - 1]["value"] or "unknown"
                changes.setdefault((step, was, cell["value"] or "unknown"),
                                   []).append(r["chain"])
    for r in rows:
        r["cells"] = [r["cells"][step] for step in columns]
    return {"key": key, "rows": rows, "silent": silent, "columns": columns,
            "disagreement": disagreement,
            "changes": [{"step": step, "key": key, "before": was, "after": now,
                         "chains": found} for (step, was, now), found in changes.items()]}


def _answer(run: ScenarioRun, answer) -> dict:
    q = answer.query
    out = {"kind": q.kind, "line": q.line, "text": q.text, "passed": answer.passed,
           "value": answer.shown, "provenance": [], "contested": [], "paths": [],
           "lines": [], "ready": isinstance(answer, ReadyAnswer)}
    if isinstance(answer, (AnalysisAnswer, ReadyAnswer)):
        out["lines"] = answer.lines()
        if q.kind == "expect":
            out["value"] = answer.shown
        return out
    out["provenance"] = [{"step": p.step, "line": p.line, "text": p.text, "kind": p.kind,
                          "witnesses": p.witnesses, "rule": p.rule or "",
                          "support": p.support} for p in answer.provenance]
    out["contested"] = list(answer.contested)
    if q.chain and q.on_date is None:
        reasons = explain(run.view(q.step), q.chain, q.key).reasons
        out["paths"] = [{"value": r.belief.value, "path": r.path.text,
                         "steps": list(r.path.steps)} for r in reasons]
    return out


def _claims(run: ScenarioRun, beliefs: _Beliefs) -> list[dict]:
    """Per key, each claim with its source, authority, the step it was known at (the
    first clock), its publication and valid-from times (the second), and what it did to
    the truth: adopted, superseded V, corroborated, contested (V kept) or nothing."""
    by_key: dict[str, list[dict]] = {}
    for event in run.scenario.events:
        if not isinstance(event, Communication) or event.kind != "claim":
            continue
        key, value, step = event.fact.key, event.fact.value, event.step
        # What the truth held then, with its rivals as of that step: a claim dominated later
        # no longer disputes it (docs/semantics.md section 4, "Dominance").
        then = [h for h in run.view(step).held([()]) if h.key == key]
        if event.fact.ended:  # docs/language.md "Endings": it closes, no value of its own
            outcome = _ending_outcome(beliefs, then, key, step)
            value = ENDED if value is None else f"{value} {ENDED}"
        else:
            outcome = _outcome(beliefs, then, key, value, step, event.source)
        by_key.setdefault(key, []).append({
            "step": step, "line": event.line, "text": event.text, "value": value,
            "source": event.source, "authority": event.authority,
            "published": event.published or "", "valid_from": event.valid_from or
            event.published or "", "audience": list(event.listeners), "outcome": outcome})
    return [{"key": k, "rows": rows} for k, rows in sorted(by_key.items())]


def _ending_outcome(beliefs: _Beliefs, held: list[Held], key: str, step: int) -> str:
    """What an ending did to the truth (`held` after it): ended V, contested (V kept), or
    nothing."""
    closed = [h.value for h in beliefs.versions((), key) if h.until == step]
    if closed:
        return f"ended {', '.join(closed)}"
    if any(r.step == step and r.value == ENDED for h in held for r in h.rivals):
        return f"contested ({', '.join(h.value for h in held)} kept)"
    return "no effect on the truth"


def _outcome(beliefs: _Beliefs, held: list[Held], key: str, value: str, step: int,
             source: Optional[str]) -> str:
    truth = beliefs.versions((), key)
    new = [h for h in truth if h.since == step and h.value == value]
    if new:
        closed = [h for h in truth if h.until == step and h.value != value]
        return f"superseded {', '.join(h.value for h in closed)}" if closed else "adopted"
    if any(h.value == value for h in held):
        return "corroborated"
    if any(r.step == step and r.value == value for h in held for r in h.rivals):
        kept = ", ".join(h.value for h in held)
        return f"contested ({kept} kept)"
    return "no effect on the truth"
