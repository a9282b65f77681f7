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
support_authority, rivals, support_published)` (rivals: the claims contested against it,
(value, source, authority, published) each; support_published: each supporting claim's
publication time, beside its authority, for the dominance rule);
`Changes` holds one graph's parameter rows (docs/cypher.md, write.cypher):
copies {p, source, key, open: [{from, vid}]}, creates {p, vid, f: the index of its fact
in `stored`, rule},
supports {p, vid, sources, authority, top, published, claimed, drop} (published: the
version's new publication time, or None; claimed: the new claims' publication time; drop:
the rivals the new claim dominates, each as `_rival_key`), contests {p, vid, key, value,
source, authority, published}, keeps {p, vid, by, value, claims, drop} (a dated
supersede's dispute: `by` takes the rivals of `vid` but those of its own `value` and those
in `drop`, and a claim of `vid`'s value per index of `vid`'s support in `claims`), closes {p, vid,
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
    rivals: tuple[tuple[Optional[str], Optional[str], int, Optional[str]], ...] = ()
    support_published: tuple[Optional[str], ...] = ()

    def claims(self) -> list[tuple[int, Optional[str]]]:
        """(authority, publication time) of each claim of this value: each supporting
        source's, and the best one, which the version ranks by."""
        return [*zip(self.support_authority, self.support_published),
                (self.authority, self.published)]


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
        support, support_authority, support_published, rivals: [[value, source, authority,
        published]]} read from the graphs (read_open.cypher: a writer that attaches)."""
        self.open = {}
        for r in rows:
            slot = (tuple(r["agents"]), r["key"])
            self.open[slot] = (*self.open.get(slot, ()), Version(
                r["vid"], r["key"], r["value"], r["authority"], r["published"],
                r["valid_from"], r["source"], tuple(r["support"] or ()),
                tuple(r["support_authority"] or ()),
                tuple(tuple(x) for x in r["rivals"] or ()),
                tuple(p or None for p in r["support_published"] or ())))

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
            if _dominated(fact, held):
                return "superseded"  # history, never a dispute (docs/semantics.md section 4)
            self._contest(chain, held, fact["value"], fact)
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
            elif outcome == "contest" and not _dominated(fact, held):
                self._contest(chain, held, ENDED, fact)
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
            support_published=tuple(fact["published"] for _ in fact["support"])))
        return vid

    def _keep_dispute(self, chain: Chain, fact: Fact, held: Version, new: int) -> None:
        """A dated supersede not forced keeps what is still disputed, as if the two had
        arrived the other way round (docs/semantics.md section 4, "Dominance"): `held`'s
        rivals of `fact`'s value join the new version's support (they claimed it); the new
        version is contested by `held`'s other rivals and by `held`'s own claims (one per
        source, with the authority it joined with), each only while no claim of the new
        version dominates it: a dominated one is superseded, history (write.cypher
        `keeps`)."""
        value = fact["value"]
        absorbed: dict[str, tuple[int, Optional[str]]] = {}  # source -> its claim, once each
        for rival, source, authority, published in held.rivals:
            if rival == value and source is not None and source not in fact["support"]:
                absorbed.setdefault(source, (authority, published))
        for source, (authority, published) in absorbed.items():
            self._graph(chain).supports.append({
                "p": chain, "vid": new, "sources": [source], "authority": authority,
                "top": fact["authority"], "published": None, "claimed": published,
                "drop": []})
        claims = [(fact["authority"], fact["published"]), *absorbed.values()]
        kept = [i for i, claim in enumerate(zip(held.support_authority,
                                                held.support_published))
                if not any(_dominates(c, claim) for c in claims)]
        others = [r for r in held.rivals if r[0] != value]
        dropped = [r for r in others if any(_dominates(c, r[2:]) for c in claims)]
        self._graph(chain).keeps.append({
            "p": chain, "vid": held.vid, "by": new, "value": value, "claims": kept,
            "drop": [_rival_key(r) for r in dropped]})
        rivals = (*(r for r in others if r not in dropped),
                  *((held.value, held.support[i], held.support_authority[i],
                     held.support_published[i]) for i in kept))
        self._replace(chain, fact["key"], new, lambda v: replace(
            v, support=(*v.support, *absorbed),
            support_authority=(*v.support_authority, *(a for a, _ in absorbed.values())),
            support_published=(*v.support_published, *(p for _, p in absorbed.values())),
            rivals=rivals))

    def _corroborate(self, chain: Chain, fact: Fact, held: Version) -> None:
        """`fact`'s new sources join `held`'s support; a claim that outranks it, both
        dated, gives it its publication time: a version ranks by its best claim, whichever
        came first; and the rivals the new claim dominates are superseded: they leave the
        dispute (docs/semantics.md section 4, "Dominance")."""
        sources = [s for s in fact["support"] if s not in held.support]
        outranks = _dated(fact, held) and (fact["authority"] > held.authority or (
            fact["authority"] == held.authority and fact["published"] > held.published))
        claim = (fact["authority"], fact["published"])
        dropped = [r for r in held.rivals if _dominates(claim, r[2:])]
        if not sources and not outranks and not dropped:
            return
        top = max(held.authority, fact["authority"])
        published = fact["published"] if outranks else None
        self._graph(chain).supports.append({"p": chain, "vid": held.vid, "sources": sources,
                                            "authority": fact["authority"], "top": top,
                                            "published": published,
                                            "claimed": fact["published"],
                                            "drop": [_rival_key(r) for r in dropped]})
        self._replace(chain, fact["key"], held.vid, lambda v: replace(
            v, authority=top, support=(*v.support, *sources),
            support_authority=(*v.support_authority, *(fact["authority"] for _ in sources)),
            support_published=(*v.support_published,
                               *(fact["published"] for _ in sources)),
            published=published or v.published,
            rivals=tuple(r for r in v.rivals if r not in dropped)))

    def _contest(self, chain: Chain, held: Version, value: Optional[str], fact: Fact) -> None:
        self._graph(chain).contests.append({"p": chain, "vid": held.vid, "key": fact["key"],
                     "value": value, "source": fact["source"],
                     "authority": fact["authority"], "published": fact["published"]})
        self._replace(chain, fact["key"], held.vid, lambda v: replace(
            v, rivals=(*v.rivals, (value, fact["source"], fact["authority"],
                                   fact["published"]))))

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


def _dominated(fact: Fact, held: Version) -> bool:
    """A claim arriving against `held` that one of `held`'s claims dominates: superseded
    on arrival, never contested."""
    claim = (fact["authority"], fact["published"])
    return any(_dominates(c, claim) for c in held.claims())


def _rival_key(rival: tuple) -> list:
    """How write.cypher finds a contested claim: [value, source, authority, published],
    with '' for a missing source or time (a list holding null never compares equal)."""
    value, source, authority, published = rival
    return [value, source or "", authority, published or ""]


def _later(mine: Optional[str], theirs: Optional[str]) -> Optional[str]:
    """`mine`, or `theirs` when that is later (either unknown: `mine`)."""
    if mine is not None and theirs is not None and mine < theirs:
        return theirs
    return mine
