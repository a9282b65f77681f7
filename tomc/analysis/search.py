"""`search "TEXT"`: the versions and events whose words match a query, ranked.

Matching is one definition (tomc/search_text.py): a term matches a word it is a prefix of.
The view finds the candidates (FalkorDB: its full-text index; the reference: a scan), and
this module ranks them the same way for both engines, with weights a reader can check:
each query term found counts KEY_WEIGHT when it matches a word of the key, else
VALUE_WEIGHT in the value, else SOURCE_WEIGHT in the source. Ties go to current versions,
then newer steps. An event's score is the number of terms its .tom text matches.

A version that a deeper chain holds exactly as the nearest chain above it that holds the key
(same value and steps: copy-on-write stores it once, the reference once per chain) is shown
once, under the outer chain: `Maya` stands for `Maya > Billing` too when they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from tomc.analysis.view import BeliefView, EventInfo, chain_text
from tomc.beliefs import Chain, Held
from tomc.search_text import matched, shown, terms as query_terms, words

KEY_WEIGHT, VALUE_WEIGHT, SOURCE_WEIGHT = 3, 2, 1
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class Hit:
    """One version found: the chain that stores it, key, value, the step it was adopted
    (`since`) and closed (`until`, None: current), the time of that step's event and its
    .tom text, its source, support and authority; `score` and the terms it `matched`."""

    chain: Chain
    key: str
    value: str
    since: int
    until: Optional[int]
    time: Optional[str]
    event: Optional[str]
    source: Optional[str]
    support: tuple[str, ...]
    authority: int
    score: int
    matched: tuple[str, ...]

    def to_json(self) -> dict:
        """{chain, key, value, step, until, current, time, event, source, support,
        authority, score, matched}."""
        return {"chain": list(self.chain), "key": self.key, "value": self.value,
                "step": self.since, "until": self.until, "current": self.until is None,
                "time": self.time, "event": self.event, "source": self.source,
                "support": list(self.support), "authority": self.authority,
                "score": self.score, "matched": [shown(t) for t in self.matched]}


@dataclass(frozen=True)
class EventHit:
    """An event whose .tom text matched: the event and the terms it matched."""

    event: EventInfo
    time: Optional[str]
    score: int
    matched: tuple[str, ...]

    def to_json(self) -> dict:
        """{step, kind, text, line, witnesses, time, score, matched}."""
        return {**self.event.to_json(), "time": self.time, "score": self.score,
                "matched": [shown(t) for t in self.matched]}


@dataclass
class SearchResult:
    """What a search found as of `step`: its `terms`, the best `limit` hits of `total`, and
    the matching events (none for an agent: it searches its own mind only)."""

    query: str
    terms: tuple[str, ...]
    step: int
    hits: list[Hit]
    total: int
    events: list[EventHit]

    def items(self, part: Optional[str]) -> list[str]:
        """`keys`: the keys found (`expect search "..." keys = {...}`); `first`: the key of
        the best hit."""
        if part == "first":
            return [self.hits[0].key] if self.hits else []
        return sorted({h.key for h in self.hits})

    def lines(self) -> list[str]:
        """Report lines: each hit with its score, chain, step and source, then events."""
        weights = (f"weights: key {KEY_WEIGHT}, value {VALUE_WEIGHT}, source {SOURCE_WEIGHT}"
                   " per term")
        out = [f"search {', '.join(shown(t) for t in self.terms) or '(no terms)'}: {self.total} version(s)"
               f"{f', best {len(self.hits)}' if len(self.hits) < self.total else ''}; "
               + weights]
        for h in self.hits:
            held = "current" if h.until is None else f"until step {h.until}"
            came = f" from {h.source}" if h.source else ""
            out.append(f"  {h.score}  {chain_text(h.chain)}: {h.key} = {h.value}  "
                       f"(step {h.since}{f', {h.time}' if h.time else ''}, {held}{came})")
        for e in self.events:
            out.append(f"  {e.score}  event step {e.event.step} (line {e.event.line}): "
                       f"{e.event.text}")
        return out

    def to_json(self) -> dict:
        """{query, terms, step, total, weights, hits: [...], events: [...]}."""
        return {"query": self.query, "terms": [shown(t) for t in self.terms], "step": self.step,
                "total": self.total,
                "weights": {"key": KEY_WEIGHT, "value": VALUE_WEIGHT, "source": SOURCE_WEIGHT},
                "hits": [h.to_json() for h in self.hits],
                "events": [e.to_json() for e in self.events]}


def search(view: BeliefView, text: str, minds: Sequence[str], truth: bool,
           events: bool, limit: int = DEFAULT_LIMIT) -> SearchResult:
    """Search the mind graphs of `minds` (and the truth, and the events' text, when asked)
    for `text`, as of the view's step; the `limit` best hits."""
    found_terms = query_terms(text)
    if not found_terms:
        return SearchResult(text, (), view.step, [], 0, [])
    at = _Steps(view.scenario.events)  # only the hits' events are read
    rows = _outermost(view.found(found_terms, minds, truth))
    hits = [_hit(h, found_terms, at) for h in rows]
    hits = [h for h in hits if h.score > 0]
    hits.sort(key=lambda h: (-h.score, h.until is not None, -h.since, h.chain, h.key,
                             h.value))
    found_events = []
    if events:
        for e in view.found_events(found_terms):
            terms_in = tuple(sorted(matched(found_terms, words(e.text))))
            if terms_in:
                time = at[e.step].time if e.step in at else None
                found_events.append(EventHit(e, time, len(terms_in), terms_in))
        found_events.sort(key=lambda e: (-e.score, -e.event.step))
    return SearchResult(text, found_terms, view.step, hits[:limit], len(hits),
                        found_events[:limit])


def _outermost(rows: list[Held]) -> list[Held]:
    """Each version once per chain, and not under a chain whose nearest ancestor with
    versions of the key found holds the same version (value, since, until). Engines store
    inherited history differently (FalkorDB once, where a chain starts to own the key; the
    reference in every chain) and this keeps what differs, alike for both."""
    found: dict[tuple, dict[tuple, Held]] = {}
    for h in rows:
        found.setdefault((h.chain, h.key), {})[(h.value, h.since, h.until)] = h
    out = []
    for (chain, key), versions in sorted(found.items()):
        above = next((found[(chain[:i], key)] for i in range(len(chain) - 1, 0, -1)
                      if (chain[:i], key) in found), {})
        out += [h for version, h in versions.items() if version not in above]
    return out


class _Steps:
    """The events by step, as a dict of them was: looked up by index, so a memory attached
    from a checkpoint reads only the hits' events (tomc/engine/history.py); a list that is
    not every step in order (an agent's history: the events it perceived) is made a dict."""

    def __init__(self, events):
        self.events, self._by_step = events, None

    def get(self, step: int):
        if isinstance(step, int) and 1 <= step <= len(self.events):
            event = self.events[step - 1]
            if event.step == step:
                return event
        if self._by_step is None:
            self._by_step = {e.step: e for e in self.events}
        return self._by_step.get(step)

    def __contains__(self, step: int) -> bool:
        return self.get(step) is not None

    def __getitem__(self, step: int):
        found = self.get(step)
        if found is None:
            raise KeyError(step)
        return found


def _hit(h: Held, found_terms: tuple[str, ...], at: "_Steps") -> Hit:
    """The version as a hit, scored by where each term matched."""
    score, terms_in = 0, []
    for weight, part in ((KEY_WEIGHT, h.key), (VALUE_WEIGHT, h.value),
                         (SOURCE_WEIGHT, h.source)):
        new = matched(found_terms, words(part)) - set(terms_in)
        score += weight * len(new)
        terms_in += sorted(new)
    event = at.get(h.since)
    return Hit(h.chain, h.key, h.value, h.since, h.until, event.time if event else None,
               event.text if event else None, h.source, tuple(sorted(h.support)),
               h.authority, score, tuple(sorted(terms_in)))
