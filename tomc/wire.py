"""The JSON shapes every front end gives (MCP tools, the HTTP API, the console): events,
held beliefs, answers with their `flagged` values, and errors. One implementation, so an
answer read over HTTP is the one an MCP client or `tomc memory ask --json` gets.

    event_json(event)   -> {step, kind, text, line, witnesses, speaker?, key?, value?, ...}
    held_json(held)     -> {chain, key, value, since, kind, source, support, authority, rivals}
    with_flags(payload, events) -> payload, plus `flagged` and `notice` when some of its
                           strings read like instructions (tomc/analysis/quoting.py)
    error_json(kind, message, exit_code, diagnostics, text)
                        -> {error, message, exit_code, diagnostics, rendered}
"""

from __future__ import annotations

from typing import Sequence

from tomc.analysis.quoting import NOTICE, flagged
from tomc.beliefs import Held
from tomc.dsl.diagnostics import Diagnostic
from tomc.dsl.program import AnyEvent


def event_json(event: AnyEvent) -> dict:
    """An event as `history` and `record` return it: {step, kind, text, line, witnesses},
    plus what it carried: speaker, listeners, source, authority, room, times, key, value
    (and `ended` for an ending)."""
    out = {"step": event.step, "kind": event.kind, "text": event.text, "line": event.line,
           "witnesses": list(event.witnesses)}
    for name in ("speaker", "source", "authority", "room", "published", "valid_from",
                 "valid_to", "time"):
        if getattr(event, name, None) not in (None, ""):
            out[name] = getattr(event, name)
    for name in ("agents", "listeners"):
        if getattr(event, name, None):
            out[name] = list(getattr(event, name))
    fact = getattr(event, "fact", None)
    if fact is not None:
        out["key"], out["value"] = fact.key, fact.value
        if fact.ended:  # docs/language.md "Endings": `value` is the one it names, or null
            out["ended"] = True
    return out


def held_json(held: Held) -> dict:
    """A belief version as `my_beliefs` returns it: {chain, key, value, since, kind, source,
    support, authority, rivals: [{value, source, authority, step, kind}]}."""
    return {"chain": list(held.chain), "key": held.key, "value": held.value,
            "since": held.since, "kind": held.kind, "source": held.source,
            "support": list(held.support), "authority": held.authority,
            "rivals": [{"value": r.value, "source": r.source, "authority": r.authority,
                        "step": r.step, "kind": r.kind} for r in held.rivals]}


def with_flags(payload: dict, events: Sequence[AnyEvent] = ()) -> dict:
    """`payload`, plus `flagged` (path, verbatim and quoted value, reason, the events that
    brought it) and `notice` when some of its strings read like instructions; their origins
    are looked up in `events`."""
    flags = flagged(payload, events)
    if not flags:
        return dict(payload)
    return {**payload, "flagged": [f.to_json() for f in flags], "notice": NOTICE}


def error_json(kind: str, message: str, exit_code: int,
               diagnostics: Sequence[Diagnostic] = (), text: str = "") -> dict:
    """An error: its kind (bad_input, access_denied, stale_write, not_found,
    database_unavailable, ...), the exit code `tomc memory` gives it, the diagnostics as
    `tomc check --json` gives them and as it prints them (`rendered`); an error echoes the
    input it refuses, so it is flagged as an answer is (`flagged`, `notice`)."""
    return with_flags({"error": kind, "message": message, "exit_code": exit_code,
                       "diagnostics": [d.to_json() for d in diagnostics],
                       "rendered": "\n".join(d.render(text) for d in diagnostics) or message})


HISTORY_LIMIT = 500  # events in one page of history, at most


def history_page(memory: str, step: int, events: Sequence[AnyEvent], after_step: int = 0,
                 limit: int = 100) -> dict:
    """A page of history as MCP `history` and HTTP `/history` return it: {memory, step,
    events: [event_json ...] (the first `limit` after `after_step`), next_after_step (where
    the next page starts; None: none left)}."""
    later = [e for e in events if e.step > after_step]
    page = later[:limit]
    return {"memory": memory, "step": step, "events": [event_json(e) for e in page],
            "next_after_step": page[-1].step if len(later) > limit else None}


def warned(payload: dict, session) -> dict:
    """`payload` of a question's answer, with `warnings` (W180: a key no event wrote, and
    the closest keys) when the question `session` (a Session) answered last had any: as
    `tomc memory ask --json` gives them, on MCP and HTTP alike."""
    if not session.warnings:
        return payload
    return {**payload, "warnings": [d.to_json() for d in session.warnings],
            "rendered_warnings": "\n".join(d.render(None) for d in session.warnings)}
