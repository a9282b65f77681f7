"""`search "TEXT"`: the facts and events whose words match a query, ranked.

Matching is one definition (tomc/search_text.py): a term matches a word it is a prefix of,
and a term that matches nothing the reader may search is forgiven (searched as the names
near it: `refnd` as `refund`). The view finds the candidate versions (FalkorDB: its
full-text index; the reference: a scan), and this module ranks them the same way for both
engines, with weights a reader can check: each query term found counts KEY_WEIGHT when it
matches a word of the key, else VALUE_WEIGHT in the value, else SOURCE_WEIGHT in the
source. Versions of one fact (a key and its value; keys that differ only in case are one
key) are one hit, with every chain that holds it and the events that gave it; a hit scores
as its best version. Ties go to facts still held, then newer steps. An event's score is the
number of terms its .tom text matches.

A version that a deeper chain holds exactly as the nearest chain above it that holds the key
(same value and steps: copy-on-write stores it once, the reference once per chain) is shown
once, under the outer chain: `Maya` stands for `Maya > Billing` too when they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from tomc.analysis.view import BeliefView, EventInfo, chain_text
from tomc.beliefs import Chain, Held
from tomc.search_text import matched, near, shown, terms as query_terms, words

KEY_WEIGHT, VALUE_WEIGHT, SOURCE_WEIGHT = 3, 2, 1
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class HeldBy:
    """One chain's version of a fact found: the chain that stores it, the key as it spells
    it, the step it was adopted (`since`) and closed (`until`, None: current), the time of
    that step's event, its source, support and authority; `score` and the terms it
    `matched` (its source may match where another chain's does not)."""

    chain: Chain
    key: str
    since: int
    until: Optional[int]
    time: Optional[str]
    source: Optional[str]
    support: tuple[str, ...]
    authority: int
    score: int
    matched: tuple[str, ...]

    def to_json(self) -> dict:
        """{chain, key, step, until, current, time, source, support, authority, score}."""
        return {"chain": list(self.chain), "key": self.key, "step": self.since,
                "until": self.until, "current": self.until is None, "time": self.time,
                "source": self.source, "support": list(self.support),
                "authority": self.authority, "score": self.score}


@dataclass(frozen=True)
class GaveIt:
    """An event that gave a fact found: its step, time, .tom text and line."""

    step: int
    time: Optional[str]
    text: str
    line: int

    def to_json(self) -> dict:
        """{step, time, text, line}."""
        return {"step": self.step, "time": self.time, "text": self.text, "line": self.line}


@dataclass(frozen=True)
class Hit:
    """One fact found (a key and its value; keys that differ in case only are one): the
    `chains` that hold it (each version once: best first), the `events` that gave it (the
    steps they adopted it, in order); its score and matched terms are its best version's."""

    key: str
    value: str
    chains: tuple[HeldBy, ...]
    events: tuple[GaveIt, ...]
    scores: Optional[dict[str, float]] = None  # by meaning or hybrid: each part and `total`

    @property
    def score(self) -> float:
        """The text score of its best version; ranked by meaning, the `total` of `scores`."""
        return self.scores["total"] if self.scores else self.chains[0].score

    @property
    def matched(self) -> tuple[str, ...]:
        return self.chains[0].matched

    @property
    def current(self) -> bool:
        """Whether some chain holds it still."""
        return any(c.until is None for c in self.chains)

    @property
    def since(self) -> int:
        """The last step a chain adopted it."""
        return max(c.since for c in self.chains)

    def to_json(self) -> dict:
        """{key, value, score, matched, current, step (the last adoption), chains: [...],
        events: [...]}, and ranked by meaning `scores`: {text, meaning, graph, authority,
        recency, total}."""
        return {"key": self.key, "value": self.value, "score": self.score,
                "matched": [shown(t) for t in self.matched], "current": self.current,
                "step": self.since, "chains": [c.to_json() for c in self.chains],
                "events": [e.to_json() for e in self.events],
                **({"scores": self.scores} if self.scores else {})}


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
    """What a search found as of `step`: its `terms` (as searched: a forgiven term replaced
    by the names near it, `forgiven`), the best `limit` facts of `total`, and the matching
    events (none for an agent: it searches its own mind only)."""

    query: str
    terms: tuple[str, ...]
    step: int
    hits: list[Hit]
    total: int
    events: list[EventHit]
    forgiven: dict[str, tuple[str, ...]] = field(default_factory=dict)
    mode: str = "text"  # or `meaning`, `hybrid` (tomc/analysis/recall.py)
    model: Optional[str] = None  # the embedder's label, ranked by meaning
    ranking: Optional[dict[str, float]] = None  # the weights of `Hit.scores` in `total`

    def items(self, part: Optional[str]) -> list[str]:
        """`keys`: the keys found (`expect search "..." keys = {...}`); `first`: the key of
        the best hit."""
        if part == "first":
            return [self.hits[0].key] if self.hits else []
        return sorted({h.key for h in self.hits})

    def lines(self) -> list[str]:
        """Report lines: each fact with its score, then the chains that hold it (those that
        hold it alike on one line: steps and source), then events."""
        weights = (f"weights: key {KEY_WEIGHT}, value {VALUE_WEIGHT}, source {SOURCE_WEIGHT}"
                   " per term")
        if self.ranking:
            weights = (f"{self.mode} by {self.model}: " + ", ".join(
                f"{part} {weight}" for part, weight in self.ranking.items()))
        forgiven = "".join(f"; {shown(t)} read as {', '.join(shown(w) for w in near)}"
                           for t, near in self.forgiven.items())
        out = [f"search {', '.join(shown(t) for t in self.terms) or '(no terms)'}: {self.total} fact(s)"
               f"{f', best {len(self.hits)}' if len(self.hits) < self.total else ''}"
               f"{forgiven}; " + weights]
        for h in self.hits:
            parts = "" if not h.scores else "  (" + ", ".join(
                f"{part} {value:.2f}" for part, value in h.scores.items()
                if part != "total" and value) + ")"
            out.append(f"  {h.score:.3f}  {h.key} = {h.value}{parts}" if h.scores
                       else f"  {h.score}  {h.key} = {h.value}")
            alike: dict[tuple, list[HeldBy]] = {}
            for c in h.chains:
                alike.setdefault((c.key, c.since, c.until, c.time, c.source), []).append(c)
            for (key, since, until, time, source), chains in alike.items():
                held = "current" if until is None else f"until step {until}"
                came = f" from {source}" if source else ""
                spelt = f" as {key}" if key != h.key else ""
                out.append(f"       {', '.join(chain_text(c.chain) for c in chains)}{spelt}: "
                           f"step {since}{f', {time}' if time else ''}, {held}{came}")
        for e in self.events:
            out.append(f"  {e.score}  event step {e.event.step} (line {e.event.line}): "
                       f"{e.event.text}")
        return out

    def to_json(self) -> dict:
        """{query, terms, forgiven: {term: [names]}, step, total, mode, weights (of words),
        hits: [...], events: [...]}; ranked by meaning also `model` and `ranking` (the
        weights of each hit's `scores`)."""
        return {"query": self.query, "terms": [shown(t) for t in self.terms],
                "forgiven": {shown(t): [shown(w) for w in near]
                             for t, near in self.forgiven.items()},
                "step": self.step, "total": self.total, "mode": self.mode,
                **({"model": self.model, "ranking": self.ranking} if self.ranking else {}),
                "weights": {"key": KEY_WEIGHT, "value": VALUE_WEIGHT, "source": SOURCE_WEIGHT},
                "hits": [h.to_json() for h in self.hits],
                "events": [e.to_json() for e in self.events]}


def search(view: BeliefView, text: str, minds: Sequence[str], truth: bool,
           events: bool, limit: int = DEFAULT_LIMIT) -> SearchResult:
    """Search the mind graphs of `minds` (and the truth, and the events' text, when asked)
    for `text`, as of the view's step; the `limit` best facts. A term that matches nothing
    is forgiven: searched as the names of the view's scenario near it (tomc/search_text.py
    `near`)."""
    found_terms = query_terms(text, view.scenario.policy.aliases)
    if not found_terms:
        return SearchResult(text, (), view.step, [], 0, [])
    at = Steps(view.scenario.events)  # only the hits' events are read
    hits, found_events = _found(view, found_terms, minds, truth, events, at)
    seen = {t for h in hits for c in h.chains for t in c.matched} | {
        t for e in found_events for t in e.matched}
    forgiven: dict[str, tuple[str, ...]] = {}
    if len(seen) < len(found_terms):
        names = _names(view.scenario, view.step)
        forgiven = {t: close for t in found_terms if t not in seen
                    for close in [near(t, names)] if close}
    if forgiven:
        found_terms = tuple(dict.fromkeys(
            w for t in found_terms for w in forgiven.get(t, (t,))))
        hits, found_events = _found(view, found_terms, minds, truth, events, at)
    return SearchResult(text, found_terms, view.step, hits[:limit], len(hits),
                        found_events[:limit], forgiven)


def _found(view: BeliefView, found_terms: tuple[str, ...], minds: Sequence[str],
           truth: bool, events: bool, at: "Steps") -> tuple[list[Hit], list[EventHit]]:
    """Every fact found (ranked) and every event (ranked), for `found_terms` as they are."""
    hits = facts_of(view.found(found_terms, minds, truth), found_terms, at)
    found_events = []
    if events:
        for e in view.found_events(found_terms):
            terms_in = tuple(sorted(matched(found_terms, words(e.text))))
            if terms_in:
                time = at[e.step].time if e.step in at else None
                found_events.append(EventHit(e, time, len(terms_in), terms_in))
        found_events.sort(key=lambda e: (-e.score, -e.event.step))
    return hits, found_events


def facts_of(rows: list[Held], found_terms: tuple[str, ...], at: "Steps") -> list[Hit]:
    """The facts of `rows` (versions) that `found_terms` match, one hit each, ranked."""
    versions = [_version(h, found_terms, at) for h in _outermost(rows)]
    facts: dict[tuple[str, str], list[tuple[str, str, HeldBy]]] = {}
    for key, value, v in versions:
        if v.score > 0:
            facts.setdefault((key.lower(), value), []).append((key, value, v))
    hits = []
    for group in facts.values():
        group.sort(key=lambda g: (-g[2].score, g[2].until is not None, -g[2].since,
                                  g[2].chain, g[0]))
        key, value = group[0][0], group[0][1]
        steps = sorted({v.since for _, _, v in group})
        gave = tuple(GaveIt(s, at[s].time, at[s].text, at[s].line) for s in steps if s in at)
        hits.append(Hit(key, value, tuple(v for _, _, v in group), gave))
    hits.sort(key=lambda h: (-h.score, not h.current, -h.since, h.key, h.value))
    return hits


def _names(scenario, step: int) -> set[str]:
    """The words a forgiven term may become: of the keys, values and sources of the
    scenario's events up to `step` (for an agent's session: the events it witnessed), its
    agents and the sources its policy names."""
    parts = list(scenario.agents) + list(scenario.policy.authorities)
    for event in scenario.events:
        fact = getattr(event, "fact", None)
        if fact is not None and event.step <= step:
            parts += [fact.key, fact.value, getattr(event, "source", None)]
    return set(words(*parts).split())


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


class Steps:
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


def _version(h: Held, found_terms: tuple[str, ...],
             at: "Steps") -> tuple[str, str, HeldBy]:
    """The version as (key, value, the chain's holding), scored by where each term
    matched."""
    score, terms_in = 0, []
    for weight, part in ((KEY_WEIGHT, h.key), (VALUE_WEIGHT, h.value),
                         (SOURCE_WEIGHT, h.source)):
        new = matched(found_terms, words(part)) - set(terms_in)
        score += weight * len(new)
        terms_in += sorted(new)
    event = at.get(h.since)
    return h.key, h.value, HeldBy(h.chain, h.key, h.since, h.until,
                                  event.time if event else None, h.source,
                                  tuple(sorted(h.support)), h.authority, score,
                                  tuple(sorted(terms_in)))
