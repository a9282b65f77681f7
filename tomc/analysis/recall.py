"""Search by meaning and hybrid search: words, meaning, closeness to a subject, authority
and recency, each score shown (docs/language.md, "Search by meaning").

Three modes:

- `text`: words only, as tomc/analysis/search.py ranks them (the default without an
  embedder);
- `meaning`: the facts nearest the query in meaning: cosine similarity of the query's
  vector and each fact's (the text `fact_text` gives), the best `limit`; words are not
  read (`text` is 0) and no event is listed;
- `hybrid` (the default with an embedder): the facts found by words and the nearest in
  meaning (at least 10), ranked by a weighted sum of parts each in 0..1 (WEIGHTS): `text`
  (the text score over its most, KEY_WEIGHT per term), `meaning` (the similarity, 0 when
  negative), `graph` (1 / (1 + links) from the focal subject `about`, when given, within
  MAX_HOPS links, over what the reader holds: tomc/analysis/about.py; else 0),
  `authority` (the best chain's authority, none counting 0, over the highest among the
  candidates; 0 when none is positive) and `recency` (the step it was last adopted over
  the view's step).

Each graph read (a mind asked; the world, for the truth, for the supervisor) first embeds
the facts it holds that have no vector yet (`Vectors.sync`), then gives its nearest facts
and the similarity of those found by words; a fact found by meaning only gets its chains
and events from the view, as search reads them, so meaning is scoped as words are. Where
vectors live is the caller's (`Vectors`): FalkorDB keeps them in each graph's vector index
(tomc/runtime/meaning_index.py), the reference in this process (`InProcess`); both compute
the same cosine, rounded to DIGITS.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Protocol, Sequence

from tomc.analysis.about import about as walk
from tomc.analysis.search import (DEFAULT_LIMIT, KEY_WEIGHT, Hit, SearchResult, Steps,
                                  facts_of, search)
from tomc.analysis.view import BeliefView
from tomc.embedders import fact_text
from tomc.search_text import terms as query_terms, words

MODES = ("text", "meaning", "hybrid")
WEIGHTS = {"text": 0.5, "meaning": 0.35, "graph": 0.1, "authority": 0.025, "recency": 0.025}
MAX_HOPS = 3  # how far closeness to a focal subject reaches
DIGITS = 4  # similarities as both engines give them alike (FalkorDB stores float32)
SUBJECTS_PER_READ = 64  # subject words per read of every fact (InProcess), one query each
WORLD = ""  # the owner of the truth's facts (a graph name, for InProcess)
Fact = tuple[str, str]  # (key lowercased, value)


class Embedder(Protocol):
    label: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class Vectors(Protocol):
    """Where facts' vectors are kept and compared, per graph (module docstring)."""

    def sync(self, embedder: Embedder, graph: str, step: int) -> None:
        """Every fact `graph` holds by `step` has its vector from `embedder`."""
        ...

    def near(self, graph: str, vector: list[float], k: int) -> dict[Fact, float]:
        """{fact: cosine similarity} of the `k` facts of `graph` nearest `vector`."""
        ...

    def of(self, graph: str, vector: list[float], facts: set[Fact]) -> dict[Fact, float]:
        """{fact: cosine similarity} of those of `facts` that `graph` has a vector of."""
        ...


class InProcess:
    """Vectors computed in this process and compared one by one (the reference engine's:
    it has no database), of the facts `view` finds; `made` ({(model, text): vector}) may
    be shared, so that a text is embedded once per process."""

    def __init__(self, view: BeliefView, made: Optional[dict] = None):
        self._view = view
        self._made: dict[tuple[str, str], list[float]] = {} if made is None else made
        self._facts: dict[str, dict[Fact, list[float]]] = {}

    def sync(self, embedder: Embedder, graph: str, step: int) -> None:
        owner = graph  # the reference names no graphs: an owner stands for its graph
        minds, truth = ([], True) if owner == WORLD else ([owner], False)
        texts = {(h.key.lower(), h.value): fact_text(h.key, h.value)
                 for h in _every_fact(self._view, minds, truth, Steps(self._view.scenario.events))}
        missing = sorted({t for t in texts.values() if (embedder.label, t) not in self._made})
        for text, made in zip(missing, embedder.embed(missing) if missing else []):
            self._made[(embedder.label, text)] = made
        self._facts[graph] = {f: self._made[(embedder.label, t)] for f, t in texts.items()}

    def near(self, graph: str, vector: list[float], k: int) -> dict[Fact, float]:
        scored = {f: cosine(vector, v) for f, v in self._facts.get(graph, {}).items()}
        return {f: scored[f] for f in sorted(scored, key=lambda f: (-scored[f], f))[:k]}

    def of(self, graph: str, vector: list[float], facts: set[Fact]) -> dict[Fact, float]:
        held = self._facts.get(graph, {})
        return {f: cosine(vector, held[f]) for f in facts if f in held}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors (0 when either is all zeros)."""
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b)) / norms if norms else 0.0


def recall(view: BeliefView, text: str, minds: Sequence[str], truth: bool, events: bool,
           limit: int = DEFAULT_LIMIT, mode: str = "text",
           embedder: Optional[Embedder] = None, vectors: Optional[Vectors] = None,
           graphs: Optional[Mapping[str, str]] = None,
           about: Optional[str] = None) -> SearchResult:
    """Search `text` in `mode` (module docstring). `graphs` names the graph of each owner
    (an agent, or WORLD for the truth) for `vectors`; `about` is the focal subject."""
    if mode == "meaning" and embedder is not None and vectors is not None:
        # words are not read: meaning alone ranks, as fast as the vector index answers
        found = SearchResult(text, query_terms(text, view.scenario.policy.aliases),
                             view.step, [], 0, [])
    else:
        found = search(view, text, minds, truth, events, limit=10**9)
    if mode == "text" or embedder is None or vectors is None:
        found.hits = found.hits[:limit]
        return found
    at = Steps(view.scenario.events)
    owners = [*minds, *([WORLD] if truth else [])]
    held = [(graphs or {}).get(o, o) for o in owners]
    for graph in held:
        vectors.sync(embedder, graph, view.step)
    by_text = {(h.key.lower(), h.value): h for h in found.hits}
    query = embedder.embed([text])[0] if text.strip() else []
    similarity: dict[Fact, float] = {}
    k = max(limit, 10)
    for graph in held if query else []:
        near = vectors.near(graph, query, k)
        near.update(vectors.of(graph, query, set(by_text) - set(near)))
        for fact, value in near.items():
            similarity[fact] = max(round(value, DIGITS), similarity.get(fact, -1.0))
    nearest = sorted(similarity, key=lambda f: (-similarity[f], f))
    if mode == "meaning":
        candidates = nearest[:limit]
    else:
        candidates = list(dict.fromkeys([*by_text, *nearest[:k]]))
    hits = {**_hits_of(view, set(candidates) - set(by_text), minds, truth, at), **by_text}
    candidates = [f for f in candidates if f in hits]
    hops = _hops(view, about, minds, truth) if about else {}
    most = KEY_WEIGHT * max(len(found.terms), 1)
    top_authority = max((hits[f].chains[0].authority or 0 for f in candidates), default=0)
    weights = {"meaning": 1.0} if mode == "meaning" else dict(WEIGHTS)
    ranked = []
    for fact in candidates:
        hit = hits[fact]
        parts = {"text": min(by_text[fact].score / most, 1.0) if fact in by_text else 0.0,
                 "meaning": max(similarity.get(fact, 0.0), 0.0),
                 "graph": 1 / (1 + hops[fact]) if fact in hops else 0.0,
                 "authority": (max(hit.chains[0].authority or 0, 0) / top_authority
                               if top_authority > 0 else 0.0),
                 "recency": hit.since / view.step if view.step else 0.0}
        parts = {part: round(value, DIGITS) for part, value in parts.items()}
        total = round(sum(weights.get(part, 0) * v for part, v in parts.items()), DIGITS)
        ranked.append(Hit(hit.key, hit.value, hit.chains, hit.events, {**parts, "total": total}))
    ranked.sort(key=lambda h: (-h.score, -h.scores["text"], not h.current, -h.since, h.key,
                               h.value))
    return SearchResult(text, found.terms, view.step, ranked[:limit], len(ranked),
                        found.events, found.forgiven, mode, embedder.label, weights)


def _hits_of(view: BeliefView, facts: set[Fact], minds: Sequence[str], truth: bool,
             at: Steps) -> dict[Fact, Hit]:
    """The hits of `facts` (found by meaning, not by words): the versions the view finds
    by their keys' first words, grouped as search groups them."""
    subjects = tuple(sorted({words(key).split()[0] for key, _ in facts if words(key)}))
    if not subjects:
        return {}
    # a subject is a prefix of others (`svc1` of `svc12`): their versions are left out
    # before they are grouped and scored
    rows = [r for r in view.found(subjects, minds, truth) if (r.key.lower(), r.value) in facts]
    return {(h.key.lower(), h.value): h for h in facts_of(rows, subjects, at)}


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
