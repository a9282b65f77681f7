"""Search by meaning and hybrid search: words, meaning, closeness to a subject, authority
and recency, each score shown (docs/language.md, "Search by meaning").

Three modes:

- `text`: words only, as tomc/analysis/search.py ranks them (the default without an
  embedder);
- `meaning`: the facts nearest the query in meaning: cosine similarity of the query's
  vector and each fact's (the text `fact_text` gives), the best `limit`;
- `hybrid` (the default with an embedder): the facts found by words and the `limit`
  nearest in meaning (per graph), ranked by a weighted sum of parts each in 0..1 (WEIGHTS):
  `text` (the text score over its most, KEY_WEIGHT per term), `meaning` (the similarity,
  0 when negative), `graph` (1 / (1 + links) from the focal subject `about`, when given:
  tomc/analysis/about.py, within MAX_HOPS links, over what the reader holds; else 0), `authority` (the best
  chain's authority over the highest among the candidates; 0 when none is positive) and
  `recency` (the step it was last adopted over the view's step).

The facts are those the reader may search (every version of the minds asked, and the
truth for the supervisor), read through the view as search reads them, so meaning is
scoped as words are. Where vectors live is the caller's (`Vectors`): FalkorDB keeps them
in each graph's vector index (tomc/runtime/meaning_index.py), the reference in this
process (`InProcess`); both compute the same cosine, rounded to DIGITS.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Protocol, Sequence

from tomc.analysis.about import about as walk
from tomc.analysis.search import (DEFAULT_LIMIT, KEY_WEIGHT, Hit, SearchResult, Steps,
                                  facts_of, search)
from tomc.analysis.view import BeliefView
from tomc.search_text import words

MODES = ("text", "meaning", "hybrid")
WEIGHTS = {"text": 0.5, "meaning": 0.35, "graph": 0.1, "authority": 0.025, "recency": 0.025}
MAX_HOPS = 3  # how far closeness to a focal subject reaches
DIGITS = 4  # similarities as both engines give them alike (FalkorDB stores float32)
SUBJECTS_PER_READ = 64  # subject words per read of every fact (a full-text query each)
WORLD = ""  # the owner of the truth's facts, in `Vectors.similar`'s graphs
Fact = tuple[str, str]  # (key lowercased, value)


class Embedder(Protocol):
    label: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class Vectors(Protocol):
    """Where facts' vectors are kept and compared (module docstring)."""

    def similar(self, embedder: Embedder, vector: list[float],
                facts: Mapping[str, Mapping[Fact, str]], k: int,
                wanted: set[Fact]) -> dict[Fact, float]:
        """{fact: cosine similarity}: per owner of `facts` ({owner: {fact: text}}), the `k`
        nearest to `vector` and those of `wanted`; a fact of several owners counts its
        best."""
        ...


class InProcess:
    """Vectors computed and kept in this process, compared one by one (the reference
    engine's: it has no database)."""

    def __init__(self):
        self._vectors: dict[tuple[str, str], list[float]] = {}

    def similar(self, embedder: Embedder, vector: list[float],
                facts: Mapping[str, Mapping[Fact, str]], k: int,
                wanted: set[Fact]) -> dict[Fact, float]:
        missing = sorted({t for held in facts.values() for t in held.values()
                          if (embedder.label, t) not in self._vectors})
        for text, made in zip(missing, embedder.embed(missing) if missing else []):
            self._vectors[(embedder.label, text)] = made
        out: dict[Fact, float] = {}
        for held in facts.values():
            scored = {f: cosine(vector, self._vectors[(embedder.label, t)])
                      for f, t in held.items()}
            nearest = sorted(scored, key=lambda f: -scored[f])[:k]
            for fact in set(nearest) | (wanted & scored.keys()):
                out[fact] = max(scored[fact], out.get(fact, -1.0))
        return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors (0 when either is all zeros)."""
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b)) / norms if norms else 0.0


def fact_text(key: str, value: str, sources: Sequence[str]) -> str:
    """What is embedded of a fact: its key and value in words, and its sources
    (`refund_4411.status`, `approved`, [Billing] -> `refund 4411 status: approved (from
    Billing)`)."""
    came = f" (from {', '.join(sources)})" if sources else ""
    return f"{_spaced(key)}: {_spaced(value)}{came}"


def _spaced(text: str) -> str:
    return " ".join(text.replace("_", " ").replace(".", " ").split())


def recall(view: BeliefView, text: str, minds: Sequence[str], truth: bool, events: bool,
           limit: int = DEFAULT_LIMIT, mode: str = "text",
           embedder: Optional[Embedder] = None, vectors: Optional[Vectors] = None,
           graphs: Optional[Mapping[str, str]] = None,
           about: Optional[str] = None) -> SearchResult:
    """Search `text` in `mode` (module docstring). `graphs` names the graph of each owner
    (an agent, or WORLD for the truth) for `vectors`; `about` is the focal subject."""
    found = search(view, text, minds, truth, events, limit=10**9)
    if mode == "text" or embedder is None or vectors is None:
        found.hits = found.hits[:limit]
        return found
    at = Steps(view.scenario.events)
    every = _every_fact(view, minds, truth, at)
    by_fact = {(h.key.lower(), h.value): h for h in every}
    by_owner: dict[str, dict[Fact, str]] = {}
    for h in every:
        for owner in {c.chain[0] if c.chain else WORLD for c in h.chains}:
            sources = sorted({c.source for c in h.chains if c.source})
            by_owner.setdefault((graphs or {}).get(owner, owner), {})[
                (h.key.lower(), h.value)] = fact_text(h.key, h.value, sources)
    text_score = {(h.key.lower(), h.value): h.score for h in found.hits}
    query = embedder.embed([text])[0] if text.strip() else []
    similarity = {f: round(s, DIGITS) for f, s in vectors.similar(
        embedder, query, by_owner, max(limit, 10), set(text_score)).items()} if query else {}
    if mode == "meaning":
        candidates = sorted(similarity, key=lambda f: -similarity[f])[:limit]
    else:
        candidates = list(dict.fromkeys([*text_score, *similarity]))
    hops = _hops(view, about, minds, truth) if about else {}
    most = KEY_WEIGHT * max(len(found.terms), 1)
    top_authority = max((by_fact[f].chains[0].authority for f in candidates if f in by_fact),
                        default=0)
    ranked = []
    for fact in candidates:
        hit = by_fact.get(fact) or next(h for h in found.hits
                                        if (h.key.lower(), h.value) == fact)
        parts = {"text": min(text_score.get(fact, 0) / most, 1.0),
                 "meaning": max(similarity.get(fact, 0.0), 0.0),
                 "graph": 1 / (1 + hops[fact]) if fact in hops else 0.0,
                 "authority": (max(hit.chains[0].authority, 0) / top_authority
                               if top_authority > 0 else 0.0),
                 "recency": hit.since / view.step if view.step else 0.0}
        weights = {"meaning": 1.0} if mode == "meaning" else WEIGHTS
        parts = {k: round(v, DIGITS) for k, v in parts.items()}
        total = round(sum(weights.get(k, 0) * v for k, v in parts.items()), DIGITS)
        ranked.append(Hit(hit.key, hit.value, hit.chains, hit.events, {**parts, "total": total}))
    ranked.sort(key=lambda h: (-h.score, -h.scores["text"], not h.current, -h.since, h.key,
                               h.value))
    return SearchResult(text, found.terms, view.step, ranked[:limit], len(ranked),
                        found.events, found.forgiven, mode, embedder.label,
                        {"meaning": 1.0} if mode == "meaning" else dict(WEIGHTS))


def _every_fact(view: BeliefView, minds: Sequence[str], truth: bool, at: Steps) -> list[Hit]:
    """Every fact the reader may search, one hit each: the versions the view finds by the
    first word of every key its scenario has written (each key's own subject matches it)."""
    keys = {e.fact.key for e in view.scenario.events
            if getattr(e, "fact", None) is not None and e.step <= view.step}
    subjects = sorted({words(k).split()[0] for k in keys if words(k)})
    out: dict[Fact, Hit] = {}
    for start in range(0, len(subjects), SUBJECTS_PER_READ):
        part = tuple(subjects[start:start + SUBJECTS_PER_READ])
        for hit in facts_of(view.found(part, minds, truth), part, at):
            # a fact is whole in the read of its key's subject (a read of another subject
            # may find only its versions whose value or source has that word)
            if words(hit.key).split()[0] in part:
                out[(hit.key.lower(), hit.value)] = hit
    return list(out.values())


def _hops(view: BeliefView, subject: str, minds: Sequence[str],
          truth: bool) -> dict[Fact, int]:
    """{fact: links from `subject`} over what the reader holds: each mind's own walk (an
    agent's session: its own), and the truth's for the supervisor; a fact reached several
    ways counts its nearest."""
    chains = ([()] if truth else []) + [(m,) for m in minds]
    out: dict[Fact, int] = {}
    for chain in chains:
        for f in walk(view, subject, chain, 3).found:
            fact = (f.key.lower(), f.value)
            out[fact] = min(f.hops, out.get(fact, f.hops))
    return out
