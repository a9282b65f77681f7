"""Resolution (docs/semantics.md section 4) decided by the FalkorDB engine in Python, from the
current versions it tracks, so each graph receives only what to do: "close these versions,
create these, add this support, record these contested claims" (write.cypher).

The engine already knows which chain owns each key (tomc/compiler/perspectives.py); `Held`
adds, per owned (chain, key), the versions open now, with what resolution compares: value,
authority (as raised by corroboration), publication time, valid_from, source and support.
The truth is the chain `()` (in the world graph). Each version has a `vid`, unique in its
graph: `rev * VIDS + n` for the n-th version created by the change committed as revision
`rev`, so ids never depend on what FalkorDB returns (a run pipelines many events before
reading a reply) and are never reused (revisions only grow).

This is the engine's only statement of the rules; the reference interpreter
(tomc/reference/interpreter.py) states them on its own, and the property tests and
tests/test_resolution_table.py compare the two.

Shapes: `Version(vid, key, value, authority, published, valid_from, source, support,
support_authority, rivals, claimed)` (rivals: the claims of other values recorded against
it, (value, source, authority, published, disputed) each, `disputed` False for one a claim
of this value dominates: superseded, kept only so that a successor it does not dominate
contests it again; claimed: every claim of this value, (source, authority, published)
each, for the dominance rule);
`Changes` holds one graph's parameter rows (docs/cypher.md, write.cypher):
copies {p, source, key, open: [{from, vid}]}, creates {p, vid, f: the index of its fact
in `stored`, rule},
supports {p, vid, sources, authority, top, published, claims, drop} (published: the
version's new publication time, or None; claims: the claims it gains, {source, authority,
published} each; drop: the rivals the new claim dominates, each as `_rival_key`), contests
{p, vid, key, value, source, authority, published, dominated}, keeps {p, vid, by, value,
claims, drop} (a dated supersede's dispute: `by` takes the rivals of `vid` but those of
its own `value`, those in `drop` not disputed, and a claim of `vid`'s value per source in
`claims`, {source, authority, published, dominated} each), closes {p, vid,
valid_to, source, authority, published} (an ending, and what it came from), supersedes
{p, vid, by, valid_to} (`by`: the successor, created first); `p` and `source` are chains, linked
to node ids by the runtime (tomc/runtime/executor.py Directory).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional, Sequence

from tomc.dsl.program import ENDED

Chain = tuple[str, ...]
Fact = dict[str, Any]  # lower.py `_fact`: key, value, many, room, source, support, ...
# The fields of a fact a version stores.
STORED = ("key", "value", "many", "room", "source", "support", "authority", "published",
          "valid_from", "words")

# Versions one change may create, across all its graphs (copies included): a broadcast to
# 16 agents at depth 3 copies a few thousand.
VIDS = 1 << 20


@dataclass(frozen=True)
class Version:
    """An open version of a key in a chain that owns it."""

    vid: int
    key: str
    value: Optional[str]
    authority: int
    published: Optional[str]
    valid_from: Optional[str]
    source: Optional[str]
    support: tuple[str, ...]
    support_authority: tuple[int, ...] = ()
    rivals: tuple[tuple[Optional[str], Optional[str], int, Optional[str], bool], ...] = ()
    claimed: tuple[tuple[Optional[str], int, Optional[str]], ...] = ()

    def claims(self) -> list[tuple[int, Optional[str]]]:
        """(authority, publication time) of each claim of this value, and of the best one,
        which the version ranks by."""
        return [*((a, p) for _, a, p in self.claimed), (self.authority, self.published)]

    def disputes(self) -> list[tuple]:
        """The rivals contested against it now (not dominated)."""
        return [r for r in self.rivals if r[4]]


@dataclass
class Changes:
    """One graph's rows for copy.cypher and write.cypher (module docstring)."""

    copies: list[dict] = field(default_factory=list)
    creates: list[dict] = field(default_factory=list)
    supports: list[dict] = field(default_factory=list)
    contests: list[dict] = field(default_factory=list)
    keeps: list[dict] = field(default_factory=list)
    closes: list[dict] = field(default_factory=list)
    supersedes: list[dict] = field(default_factory=list)

    def params(self) -> dict[str, list[dict]]:
        """write.cypher's rows: creates and supersedes always, the rarer parts when they
        have rows (only those are rendered: `parts`). Copies go in copy.cypher."""
        rare = {"supports": self.supports, "contests": self.contests, "keeps": self.keeps,
                "closes": self.closes}
        return {"creates": self.creates, "supersedes": self.supersedes,
                **{name: rows for name, rows in rare.items() if rows}}

    def parts(self) -> dict[str, bool]:
        """Which of write.cypher's rarer parts to render."""
        return {"supports": bool(self.supports), "contests": bool(self.contests),
                "keeps": bool(self.keeps), "closes": bool(self.closes)}


class Held:
    """The open versions of every owned (chain, key): `{(chain, key): (Version, ...)}`."""

    def __init__(self):
        self.open: dict[tuple[Chain, str], tuple[Version, ...]] = {}

    def load(self, rows: Iterable[dict]) -> None:
        """Take rows {agents, vid, key, value, authority, published, valid_from, source,
        support, support_authority, claimed: [[source, authority, published]], rivals:
        [[value, source, authority, published, disputed]]} read from the graphs
        (read_open.cypher: a writer that attaches; '' stands for no source or time)."""
        self.open = {}
        for r in rows:
            slot = (tuple(r["agents"]), r["key"])
            self.open[slot] = (*self.open.get(slot, ()), Version(
                r["vid"], r["key"], r["value"], r["authority"], r["published"],
                r["valid_from"], r["source"], tuple(r["support"] or ()),
                tuple(r["support_authority"] or ()),
                tuple(tuple(x) for x in r["rivals"] or ()),
                tuple((s or None, a, p or None) for s, a, p in r["claimed"] or ())))

    def accept(self, changed: dict[tuple[Chain, str], tuple[Version, ...]]) -> None:
        """Record what a committed change left open (`Resolution.changed`)."""
        self.open.update(changed)


class Resolution:
    """Resolving one change: reads `held`, records what it changes in `changed` (accepted
    once committed) and each graph's rows in `changes` (by agent; None: the world graph)."""

    def __init__(self, held: Held, rev: int, ties: str, facts: Sequence[Fact] = ()):
        self.held = held
        # What a new version stores of its fact, once per statement (`$stored`): rows
        # name it by index, so a broadcast's many versions send one copy of it.
        self.facts = {id(f): i for i, f in enumerate(facts)}
        self.stored = [{k: f[k] for k in STORED} for f in facts]
        self.changed: dict[tuple[Chain, str], tuple[Version, ...]] = {}
        self.changes: dict[Optional[str], Changes] = {}
        self.next_vid = rev * VIDS
        self.ties = ties

    def current(self, chain: Chain, key: str) -> tuple[Version, ...]:
        slot = (chain, key)
        return self.changed[slot] if slot in self.changed else self.held.open.get(slot, ())

    def _graph(self, chain: Chain) -> Changes:
        return self.changes.setdefault(chain[0] if chain else None, Changes())

    def _vid(self) -> int:
        self.next_vid += 1
        return self.next_vid

    # ---------------------------------------------------------------- copy-on-write

    def copy(self, chain: Chain, source: Chain, key: str) -> None:
        """`chain` starts to own `key`, with `source`'s history: its closed versions shared,
        its open ones copied under new ids (they may diverge from now on)."""
        opened = tuple(replace(v, vid=self._vid()) for v in self.current(source, key))
        self._graph(chain).copies.append({
            "p": chain, "source": source, "key": key,
            "open": [{"from": old.vid, "vid": new.vid}
                     for old, new in zip(self.current(source, key), opened)]})
        self.changed[(chain, key)] = opened

    # ---------------------------------------------------------------- resolution

    def resolve(self, chain: Chain, fact: Fact, force: bool, rule: str) -> str:
        """Resolve `fact` into `chain` (which owns its key); returns the outcome: adopt,
        corroborate, supersede, contest or ignore (an ending: close, contest, ignore, or
        none when the chain holds nothing it names)."""
        if fact.get("ended"):
            return self._end(chain, fact, force)
        versions = self.current(chain, fact["key"])
        held = next((v for v in versions if not fact["many"] or v.value == fact["value"]),
                    None)
        if held is None:
            self._create(chain, fact, rule, versions)
            return "adopt"
        if held.value == fact["value"]:
            self._corroborate(chain, fact, held)
            return "corroborate"
        outcome = "supersede" if force else self._judge(fact, held)
        if outcome == "supersede":
            # Valid time: the held value ends where the new one begins, never before it
            # began itself (an empty interval, not an inverted one).
            valid_to = _later(fact["valid_from"], held.valid_from)
            kept = tuple(v for v in versions if v.vid != held.vid)
            new = self._create(chain, fact, rule, kept)
            if not force and _dated(fact, held):
                self._keep_dispute(chain, fact, held, new)
            self._graph(chain).supersedes.append({"p": chain, "vid": held.vid, "by": new,
                                                  "valid_to": valid_to})
        elif outcome == "contest":
            # A claim a claim of the held value dominates is superseded on arrival: kept,
            # not disputed (docs/semantics.md section 4, "Dominance").
            self._contest(chain, held, fact["value"], fact, not _dominated(fact, held))
        return outcome

    def _judge(self, fact: Fact, held: Version) -> str:
        """The table of section 4 for a value (or an ending) against a held version of
        another value: supersede, contest, or ignore (a tie under `ties first`). Higher
        authority supersedes whatever the dates, so that between dated values arrival order
        decides nothing (section 4, "Arrival order")."""
        if fact["authority"] != held.authority:
            return "supersede" if fact["authority"] > held.authority else "contest"
        if not _dated(fact, held) or fact["published"] > held.published:
            return "supersede"
        if fact["published"] == held.published:  # a tie: same authority, same instant
            return {"newest": "supersede", "first": "ignore"}.get(self.ties, "contest")
        return "contest"

    def _end(self, chain: Chain, fact: Fact, force: bool) -> str:
        """An ending closes each open version it names that it outranks (docs/semantics.md
        section 4, "Endings"), else is recorded against it as `(ended)`."""
        versions = self.current(chain, fact["key"])
        outcome = "none"
        closed = set()
        for held in versions:
            if (fact["value"] is not None and held.value != fact["value"]) or (
                    fact.get("of") is not None and held.source != fact["of"]):
                continue
            outcome = "supersede" if force else self._judge(fact, held)
            if outcome == "supersede":
                outcome = "close"
                closed.add(held.vid)
                # What ended it stays on it, for a handoff to pass the ending on.
                self._graph(chain).closes.append({
                    "p": chain, "vid": held.vid,
                    "valid_to": _later(fact.get("valid_to"), held.valid_from),
                    "source": fact["source"], "authority": fact["authority"],
                    "published": fact["published"]})
            elif outcome == "contest":
                self._contest(chain, held, ENDED, fact, not _dominated(fact, held))
        self.changed[(chain, fact["key"])] = tuple(
            v for v in self.current(chain, fact["key"]) if v.vid not in closed)
        return outcome

    def rival(self, chain: Chain, rival: Fact) -> None:
        """A handed-over caveat: recorded against what `chain` now holds about its key,
        unless that is the rival's own value (tomc/analysis/handoff.py `handed_over`)."""
        held = next(iter(self.current(chain, rival["key"])), None)
        if held is not None and held.value != rival["value"]:
            self._contest(chain, held, rival["value"], {**rival, "published": None})

    # ---------------------------------------------------------------- rows

    def _create(self, chain: Chain, fact: Fact, rule: str, kept: tuple[Version, ...]) -> int:
        """A new open version of `fact` (one of the event's: write.cypher takes its
        fields from `$stored`, and the step and the event's provenance from the statement)."""
        vid = self._vid()
        self._graph(chain).creates.append({"p": chain, "vid": vid,
                                           "f": self.facts[id(fact)], "rule": rule})
        self.changed[(chain, fact["key"])] = (*kept, Version(
            vid, fact["key"], fact["value"], fact["authority"], fact["published"],
            fact["valid_from"], fact["source"], tuple(fact["support"]),
            tuple(fact["authority"] for _ in fact["support"]),
            claimed=tuple((s, fact["authority"], fact["published"]) for s in fact["support"])))
        return vid

    def _keep_dispute(self, chain: Chain, fact: Fact, held: Version, new: int) -> None:
        """A dated supersede not forced keeps the dispute, as if the two had arrived the
        other way round (docs/semantics.md section 4, "Dominance"): `held`'s rivals of
        `fact`'s value join the new version (their sources its support, their claims its
        own: they claimed it); the new version is recorded against by `held`'s other rivals
        and by `held`'s own claims (one per source, its latest), each disputed only while
        no claim of the new version dominates it (write.cypher `keeps`)."""
        value = fact["value"]
        absorbed = [r for r in held.rivals if r[0] == value and r[1] is not None]
        joined: dict[str, int] = {}  # new sources -> authority, each once
        for _, source, authority, _, _ in absorbed:
            if source not in fact["support"]:
                joined.setdefault(source, authority)
        claimed = [(s, a, p) for _, s, a, p, _ in absorbed]
        if absorbed:
            self._graph(chain).supports.append({
                "p": chain, "vid": new, "sources": list(joined),
                "authorities": list(joined.values()), "authority": fact["authority"],
                "top": fact["authority"], "published": None,
                "claims": [_claim_row(c) for c in claimed], "drop": []})
        claims = [(fact["authority"], fact["published"]), *((a, p) for _, a, p in claimed)]
        olds = [{**_claim_row(c), "dominated": any(_dominates(n, c[1:]) for n in claims)}
                for c in _latest_per_source(held.claimed)]
        others = [r for r in held.rivals if r[0] != value]
        rivals = tuple((*r[:4], not any(_dominates(n, r[2:4]) for n in claims))
                       for r in others)
        self._graph(chain).keeps.append({
            "p": chain, "vid": held.vid, "by": new, "value": value, "claims": olds,
            "drop": [_rival_key(r) for r in rivals if not r[4]]})
        rivals += tuple((held.value, c["source"], c["authority"], c["published"],
                         not c["dominated"]) for c in olds)
        self._replace(chain, fact["key"], new, lambda v: replace(
            v, support=(*v.support, *joined),
            support_authority=(*v.support_authority, *joined.values()),
            claimed=(*v.claimed, *claimed), rivals=rivals))

    def _corroborate(self, chain: Chain, fact: Fact, held: Version) -> None:
        """`fact`'s new sources join `held`'s support and its claims `held`'s claims; a
        claim that outranks it, both dated, gives it its publication time: a version ranks
        by its best claim, whichever came first; and the rivals the claim dominates are no
        longer disputed (docs/semantics.md section 4, "Dominance")."""
        sources = [s for s in fact["support"] if s not in held.support]
        outranks = _dated(fact, held) and (fact["authority"] > held.authority or (
            fact["authority"] == held.authority and fact["published"] > held.published))
        claim = (fact["authority"], fact["published"])
        dropped = [r for r in held.disputes() if _dominates(claim, r[2:4])]
        new_claims = [(s, fact["authority"], fact["published"]) for s in fact["support"]]
        if not sources and not outranks and not dropped and (
                fact["published"] is None or set(new_claims) <= set(held.claimed)):
            return
        top = max(held.authority, fact["authority"])
        published = fact["published"] if outranks else None
        self._graph(chain).supports.append({
            "p": chain, "vid": held.vid, "sources": sources,
            "authorities": [fact["authority"] for _ in sources],
            "authority": fact["authority"], "top": top, "published": published,
            "claims": [_claim_row(c) for c in new_claims],
            "drop": [_rival_key(r) for r in dropped]})
        self._replace(chain, fact["key"], held.vid, lambda v: replace(
            v, authority=top, support=(*v.support, *sources),
            support_authority=(*v.support_authority, *(fact["authority"] for _ in sources)),
            claimed=(*v.claimed, *new_claims), published=published or v.published,
            rivals=tuple((*r[:4], False) if r in dropped else r for r in v.rivals)))

    def _contest(self, chain: Chain, held: Version, value: Optional[str], fact: Fact,
                 disputed: bool = True) -> None:
        self._graph(chain).contests.append({"p": chain, "vid": held.vid, "key": fact["key"],
                     "value": value, "source": fact["source"],
                     "authority": fact["authority"], "published": fact["published"],
                     "dominated": not disputed})
        self._replace(chain, fact["key"], held.vid, lambda v: replace(
            v, rivals=(*v.rivals, (value, fact["source"], fact["authority"],
                                   fact["published"], disputed))))

    def _replace(self, chain: Chain, key: str, vid: int, change) -> None:
        """The open version `vid` of (chain, key), changed by `change(version)`."""
        self.changed[(chain, key)] = tuple(change(v) if v.vid == vid else v
                                           for v in self.current(chain, key))


def _dated(fact: Fact, held: Version) -> bool:
    """Both sides have a publication time: the only case resolution can rank without
    arrival order (docs/semantics.md section 4, "Arrival order")."""
    return fact["published"] is not None and held.published is not None


def _dominates(claim: tuple[int, Optional[str]], other: tuple[int, Optional[str]]) -> bool:
    """Claim (authority, published) dominates `other`: both dated, authority at least as
    high and published no earlier, not both equal (the same authority and instant is a
    tie). An undated claim neither dominates nor is dominated: arrival order decides for it,
    as the table says (docs/semantics.md section 4, "Dominance")."""
    (authority, published), (their_authority, theirs) = claim, other
    if published is None or theirs is None:
        return False
    return (authority >= their_authority and published >= theirs
            and (authority, published) != (their_authority, theirs))


def _latest_per_source(claimed) -> list[tuple[Optional[str], int, Optional[str]]]:
    """Each source's latest claim (by authority, then date; undated counts as earliest):
    it dominates the same source's others, so it alone decides whether the source still
    disputes a successor."""
    best: dict = {}
    for source, authority, published in claimed:
        mine = (authority, published or "")
        if source not in best or mine > (best[source][1], best[source][2] or ""):
            best[source] = (source, authority, published)
    return list(best.values())


def _claim_row(claim: tuple) -> dict:
    source, authority, published = claim
    return {"source": source, "authority": authority, "published": published}


def _dominated(fact: Fact, held: Version) -> bool:
    """A claim arriving against `held` that one of `held`'s claims dominates: superseded
    on arrival, never contested."""
    claim = (fact["authority"], fact["published"])
    return any(_dominates(c, claim) for c in held.claims())


def _rival_key(rival: tuple) -> list:
    """How write.cypher finds a contested claim: [value, source, authority, published],
    with '' for a missing source or time (a list holding null never compares equal)."""
    value, source, authority, published = rival[:4]
    return [value, source or "", authority, published or ""]


def _later(mine: Optional[str], theirs: Optional[str]) -> Optional[str]:
    """`mine`, or `theirs` when that is later (either unknown: `mine`)."""
    if mine is not None and theirs is not None and mine < theirs:
        return theirs
    return mine
