"""The resolution rules (docs/semantics.md section 4) as a table, reproduced by both engines.

Each row is one key: a claim P (value `p`, from `a1`, authority 1) and a claim Q (value `q`)
arriving in either order, then optionally an ending of the key; the columns are every
combination of cardinality, trust mode, ties, Q's authority against P's (lower, equal,
higher), Q's date against P's (older, same, newer, or either or both undated) and arrival
order (P first or Q first), and the ending's authority; and, for dated claims of a
cardinality-one key, a third claim R of P's value arriving first, second or last (a
corroboration that outranks, a supersede that absorbs the claims of its value: section 4,
"Arrival order"). A claim of another value that a claim of the value held dominates (both
dated, authority no lower, date no earlier, not both equal) is superseded, never contested,
whichever arrived first (section 4, "Dominance"): in every dated row the two arrival orders
give the same answers (`test_dated_rows_do_not_depend_on_arrival_order`). `expected` states
the table of section 4 for one row; the FalkorDB
engine (tomc/compiler/resolve.py, answers read back from the graphs) and the reference
interpreter must both give it, for the truth and for a listener, as values held at the
end, claims contested against them and their support.

Under `trust learned` each row has sources of its own (`a1_7`, `b2_7`), so that what one
row settles never changes another's standings: the table is then `trust authority`'s (a
standing changes only after the settlement), and the ending settles the row's dispute
(P's and Q's sources, cardinality one) when it comes from one of the disputants or from a
strictly higher standing, each disputant losing 1, as R arriving last does when it outranks
both (P's source gaining 1, Q's losing 1: docs/semantics.md section 4, "Learned trust");
both engines must give those standings.
"""

from __future__ import annotations

from itertools import product
from typing import Optional

import pytest

from tomc.dsl.checker import check_text
from tomc.dsl.program import QueryModel
from tomc.engine.falkordb import FalkorEngine
from tomc.engine.reference import ReferenceEngine

CARDINALITIES = ("one", "many")
AUTHORITY = {"lower": ("b0", 0), "equal": ("b1", 1), "higher": ("b2", 2)}
# Q's publication time against P's (P: 2026-01-02 unless undated).
DATES = {"older": ("2026-01-02", "2026-01-01"), "same": ("2026-01-02", "2026-01-02"),
         "newer": ("2026-01-02", "2026-01-03"), "P undated": (None, "2026-01-02"),
         "Q undated": ("2026-01-02", None), "both undated": (None, None)}
ARRIVALS = ("P first", "Q first")
# An ending of the key after both claims, dated after them, from a source of this authority.
ENDINGS = {"none": None, "lower": ("b0", 0), "equal": ("a1", 1), "higher": ("b2", 2)}
TRUSTS = ("credulous", "authority", "exit_order", "learned")
TIES = ("contested", "newest", "first")

# A third claim R of P's value, from `c2` (authority 2) at 2026-01-04 (after P and Q),
# arriving first, between P and Q, or last: a corroboration that outranks P gives it R's
# publication time, and a supersede by p absorbs the claims of p that had lost (section 4,
# "Arrival order"). Only for a cardinality-one key with P and Q dated, without an ending.
R_ARRIVALS = ("none", "R first", "R second", "R last")

ROWS = [(*row, "none") for row in product(CARDINALITIES, AUTHORITY, DATES, ARRIVALS, ENDINGS)]
ROWS += [("one", authority, dates, arrival, "none", r)
         for authority, dates, arrival, r in product(
             AUTHORITY, ("older", "same", "newer"), ARRIVALS, R_ARRIVALS[1:])]


class Claim:
    """A value (or an ending: value None) from `source`, with its authority and
    publication time; as a held version, its support, the (authority, published) of each
    of its claims, and the claims of other values recorded against it, (value, source,
    authority, published, disputed) each: a claim that one of its claims dominates is
    kept, not disputed, for a successor that does not dominate it."""

    def __init__(self, value: Optional[str], source: str, authority: int,
                 published: Optional[str]):
        self.value, self.source = value, source
        self.authority, self.published = authority, published
        self.support: list[str] = [source]
        self.claims: list[tuple[int, Optional[str]]] = [(authority, published)]
        self.contested: list[tuple[str, str, int, Optional[str], bool]] = []

    def dominated_by(self, claims: list[tuple[int, Optional[str]]]) -> bool:
        """Some claim of `claims` dominates this one (both dated)."""
        return any(dominates(c, (self.authority, self.published)) for c in claims)

    def all_claims(self) -> list[tuple[int, Optional[str]]]:
        """Each source's claim, and the best one, which the version ranks by."""
        return [*self.claims, (self.authority, self.published)]


def dominates(claim: tuple[int, Optional[str]], other: tuple[int, Optional[str]]) -> bool:
    """Section 4, "Dominance": both dated, authority no lower, date no earlier, not both
    equal."""
    if claim[1] is None or other[1] is None or claim == other:
        return False
    return claim[0] >= other[0] and claim[1] >= other[1]


def dated(new: Claim, held: Claim) -> bool:
    return new.published is not None and held.published is not None


def judge(new: Claim, held: Claim, ties: str) -> str:
    """Section 4's table for a value (or an ending) against a held version of another
    value: supersede, contest, or ignore. Higher authority supersedes whatever the dates."""
    if new.authority != held.authority:
        return "supersede" if new.authority > held.authority else "contest"
    if not dated(new, held) or new.published > held.published:
        return "supersede"
    if new.published == held.published:
        return {"newest": "supersede", "first": "ignore", "contested": "contest"}[ties]
    return "contest"


def settle(arrivals: list[Claim], many: bool, force: bool, ties: str) -> list[Claim]:
    """The versions held after `arrivals`, in order, by section 4's table."""
    held: list[Claim] = []
    for new in arrivals:
        if new.value is None:  # an ending: it closes what it outranks, else is contested
            for version in list(held):
                outcome = "supersede" if force else judge(new, version, ties)
                if outcome == "supersede":
                    held.remove(version)
                elif outcome == "contest":
                    version.contested.append(("(ended)", new.source, new.authority,
                                              new.published,
                                              not new.dominated_by(version.all_claims())))
            continue
        same = [v for v in held if v.value == new.value]
        if same:  # corroborate: a claim that outranks the version gives it its date
            version = same[0]
            if new.source not in version.support:
                version.support.append(new.source)
                version.claims.append((new.authority, new.published))
            if dated(new, version) and judge(new, version, "contested") == "supersede":
                version.published = new.published
            version.authority = max(version.authority, new.authority)
            version.contested = [(*c[:4], c[4] and not dominates((new.authority,
                                                                   new.published), c[2:4]))
                                 for c in version.contested]
        elif many or not held:
            held.append(new)
        else:
            old = held[0]
            outcome = "supersede" if force else judge(new, old, ties)
            if outcome == "supersede":
                held = [new]
                if not force and dated(new, old):  # disputed while not dominated
                    for v, s, a, p, _ in old.contested:
                        if v == new.value and s not in new.support:
                            new.support.append(s)
                            new.claims.append((a, p))
                    new.contested = [
                        (*c[:4], not any(dominates(n, c[2:4]) for n in new.claims))
                        for c in old.contested if c[0] != new.value]
                    new.contested += [
                        (old.value, s, *c, not any(dominates(n, c) for n in new.claims))
                        for s, c in zip(old.support, old.claims)]
            elif outcome == "contest":
                old.contested.append((new.value, new.source, new.authority, new.published,
                                      not new.dominated_by(old.all_claims())))
    return held


def expected(row: tuple, trust: str, ties: str) -> tuple[list[str], list[str], list[str]]:
    """(values held at the end, claims contested against them, their support) for one
    row."""
    cardinality, authority, dates, arrival, ending, r = row
    p = Claim("p", "a1", 1, DATES[dates][0])
    q = Claim("q", AUTHORITY[authority][0], AUTHORITY[authority][1], DATES[dates][1])
    arrivals = [p, q] if arrival == "P first" else [q, p]
    if r != "none":
        arrivals.insert(R_ARRIVALS.index(r) - 1, Claim("p", "c2", 2, "2026-01-04"))
    if ENDINGS[ending] is not None:
        arrivals.append(Claim(None, ENDINGS[ending][0], ENDINGS[ending][1], "2026-02-01"))
    # Claims are adopted outright unless trust is by authority (learned trust: a standing
    # changes only after the row's last claim, its settlement).
    held = settle(arrivals, cardinality == "many", trust not in ("authority", "learned"), ties)
    return (sorted(v.value for v in held),
            sorted({c[0] for v in held for c in v.contested if c[4]}),
            sorted({s for v in held for s in v.support}))


def test_dated_rows_do_not_depend_on_arrival_order():
    """The table itself, by the dominance rule: under `trust authority`, for dated claims
    (a tie excepted: `ties` is arrival order by definition), P first and Q first leave the
    same values, rivals and support; and a superseded claim is never among the rivals."""
    for row in ROWS:
        cardinality, authority, dates, arrival, ending, r = row
        if arrival != "P first" or dates not in ("older", "same", "newer") or (
                authority == "equal" and dates == "same"):
            continue
        other = (cardinality, authority, dates, "Q first", ending, r)
        for ties in TIES:
            assert expected(row, "authority", ties) == expected(other, "authority", ties), row
        if cardinality == "one" and ending == "none" and r == "none":
            # Q dominated by P (or P by Q): the loser is history, not a rival.
            q_authority = AUTHORITY[authority][1]
            q_older = dates != "newer"
            if (q_authority <= 1 and q_older) or (q_authority >= 1 and not q_older):
                assert expected(row, "authority", "contested")[1] == [], row


def settled(row: tuple) -> dict[str, int]:
    """Under `trust learned`, the standings one row's ending (or R, arriving last) leaves
    that differ from the declared authorities: {source: standing} (the row's own sources,
    unsuffixed)."""
    cardinality, authority, _, _, ending, r = row
    q_source, q_authority = AUTHORITY[authority]
    if r == "R last" and q_authority < 2:  # R outranks both disputants: p is confirmed
        return {"a1": 2, q_source: q_authority - 1}
    if cardinality == "many" or ENDINGS[ending] is None:
        return {}
    e_source, e_authority = ENDINGS[ending]
    if e_source in ("a1", q_source) or e_authority > max(1, q_authority):
        return {"a1": 0, q_source: q_authority - 1}  # the ending contradicts both values
    return {}


def scenario_text(trust: str, ties: str) -> str:
    """One scenario per trust mode and ties: each row a key of its own (and, under `trust
    learned`, sources of its own)."""
    many = "".join(f"  predicate t.k{i} many\n" for i, row in enumerate(ROWS) if row[0] == "many")
    lines = []
    sources = {"a1": 1, "b0": 0, "b1": 1, "b2": 2, "c2": 2}
    declared = []
    for i, (_, authority, dates, arrival, ending, r) in enumerate(ROWS):
        own = (lambda s: f"{s}_{i}") if trust == "learned" else (lambda s: s)
        p_date, q_date = DATES[dates]
        p = f'claim t.k{i} = p from {own("a1")}{_at(p_date)} to all'
        q = f'claim t.k{i} = q from {own(AUTHORITY[authority][0])}{_at(q_date)} to all'
        claims = [p, q] if arrival == "P first" else [q, p]
        if r != "none":
            claims.insert(R_ARRIVALS.index(r) - 1,
                          f"claim t.k{i} = p from {own('c2')} at 2026-01-04 to all")
        lines += claims
        if ENDINGS[ending] is not None:
            lines.append(f"claim t.k{i} ended from {own(ENDINGS[ending][0])} at 2026-02-01 "
                         "to all")
        if trust == "learned" or i == 0:
            declared += [f"  source {own(s)} authority {a}\n" for s, a in sources.items()]
    body = "\n".join(f"  {line}" for line in lines)
    return (f"policy table {{\n  depth 2\n  trust {trust}\n  ties {ties}\n"
            f"{''.join(declared)}{many}}}\n\n"
            f"scenario table {{\n  agents L, M\n  rooms r\n  L, M enter r\n{body}\n}}\n")


def _at(date: Optional[str]) -> str:
    return f" at {date}" if date else ""


@pytest.mark.parametrize("trust,ties", list(product(TRUSTS, TIES)))
def test_both_engines_reproduce_the_resolution_table(db, trust, ties):
    text = scenario_text(trust, ties)
    result = check_text(text, "table.tom")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    (scenario,) = result.scenarios
    reference = ReferenceEngine.build(None, scenario)
    engine = FalkorEngine.build(db, scenario)
    try:
        step = len(scenario.events)
        queries = [QueryModel("ask", chain, f"t.k{i}", step, "", 0)
                   for i in range(len(ROWS)) for chain in ((), ("L",), ("M", "L"))]
        answers = {"falkordb": engine.answer_all(queries),
                   "reference": [reference.answer(q) for q in queries]}
        for name, found in answers.items():
            for query, answer in zip(queries, found):
                row = ROWS[int(query.key[3:])]
                support = sorted({s.removesuffix(query.key.replace("t.k", "_"))
                                  for s in answer.support})  # the row's own sources
                got = (sorted(answer.values), sorted(set(answer.contested)), support)
                assert got == expected(row, trust, ties), (name, trust, ties, row,
                                                           query.chain)
        if trust == "learned":
            for name, view in (("falkordb", engine.view(step)),
                               ("reference", reference.view(step))):
                for i, row in enumerate(ROWS):
                    learned = settled(row)
                    declared = {"a1": 1, "b0": 0, "b1": 1, "b2": 2, "c2": 2}
                    got = {s: view.standing(f"{s}_{i}").value for s in declared}
                    want = {s: learned.get(s, a) for s, a in declared.items()}
                    assert got == want, (name, ties, row)
    finally:
        engine.drop()
        engine.close()
