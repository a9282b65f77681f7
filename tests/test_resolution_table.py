"""The resolution rules (docs/semantics.md section 4) as a table, reproduced by both engines.

Each row is one key: a claim P (value `p`, from `a1`, authority 1) and a claim Q (value `q`)
arriving in either order, then optionally an ending of the key; the columns are every
combination of cardinality, trust mode, ties, Q's authority against P's (lower, equal,
higher), Q's date against P's (older, same, newer, or either or both undated) and arrival
order (P first or Q first), and the ending's authority. `expected` states the table of
section 4 for one row; the FalkorDB engine (tomc/compiler/resolve.py, answers read back from
the graphs) and the reference interpreter must both give it, for the truth and for a
listener, as values held at the end and claims contested against them.
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
TRUSTS = ("credulous", "authority", "exit_order")
TIES = ("contested", "newest", "first")

ROWS = list(product(CARDINALITIES, AUTHORITY, DATES, ARRIVALS, ENDINGS))


class Claim:
    """A value (or an ending: value None) with its authority and publication time."""

    def __init__(self, value: Optional[str], authority: int, published: Optional[str]):
        self.value, self.authority, self.published = value, authority, published
        self.contested: list[str] = []


def judge(new: Claim, held: Claim, ties: str) -> str:
    """Section 4's table for a value (or an ending) against a held version of another
    value: supersede, contest, or ignore."""
    undated = new.published is None or held.published is None
    if new.authority > held.authority and (undated or new.published >= held.published):
        return "supersede"
    if new.authority == held.authority:
        if undated or new.published > held.published:
            return "supersede"
        if new.published == held.published:
            return {"newest": "supersede", "first": "ignore", "contested": "contest"}[ties]
    return "contest"


def expected(row: tuple, trust: str, ties: str) -> tuple[list[str], list[str]]:
    """(values held at the end, claims contested against them) for one row."""
    cardinality, authority, dates, arrival, ending = row
    force = trust != "authority"  # claims are adopted outright unless trust is by authority
    p = Claim("p", 1, DATES[dates][0])
    q = Claim("q", AUTHORITY[authority][1], DATES[dates][1])
    first, second = (p, q) if arrival == "P first" else (q, p)
    held = [first]
    if cardinality == "many":
        held.append(second)
    else:
        outcome = "supersede" if force else judge(second, first, ties)
        if outcome == "supersede":
            held = [second]
        elif outcome == "contest":
            first.contested.append(second.value)
    if ENDINGS[ending] is not None:
        end = Claim(None, ENDINGS[ending][1], "2026-02-01")
        for version in list(held):
            outcome = "supersede" if force else judge(end, version, ties)
            if outcome == "supersede":
                held.remove(version)
            elif outcome == "contest":
                version.contested.append("(ended)")
    return sorted(v.value for v in held), sorted({c for v in held for c in v.contested})


def scenario_text(trust: str, ties: str) -> str:
    """One scenario per trust mode and ties: each row a key of its own."""
    many = "".join(f"  predicate t.k{i} many\n" for i, row in enumerate(ROWS) if row[0] == "many")
    lines = []
    for i, (_, authority, dates, arrival, ending) in enumerate(ROWS):
        p_date, q_date = DATES[dates]
        p = f'claim t.k{i} = p from a1{_at(p_date)} to all'
        q = f'claim t.k{i} = q from {AUTHORITY[authority][0]}{_at(q_date)} to all'
        lines += [p, q] if arrival == "P first" else [q, p]
        if ENDINGS[ending] is not None:
            lines.append(f"claim t.k{i} ended from {ENDINGS[ending][0]} at 2026-02-01 to all")
    body = "\n".join(f"  {line}" for line in lines)
    return (f"policy table {{\n  depth 2\n  trust {trust}\n  ties {ties}\n"
            "  source a1 authority 1\n  source b0 authority 0\n  source b1 authority 1\n"
            f"  source b2 authority 2\n{many}}}\n\n"
            f"scenario table {{\n  agents L, M\n  rooms r\n  L, M enter r\n{body}\n}}\n")


def _at(date: Optional[str]) -> str:
    return f" at {date}" if date else ""


@pytest.mark.parametrize("trust,ties", list(product(TRUSTS, TIES)))
def test_both_engines_reproduce_the_resolution_table(db, trust, ties):
    text = scenario_text(trust, ties)
    result = check_text(text, "table.tom")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    (scenario,) = result.scenarios
    reference = ReferenceEngine(scenario)
    reference.apply(list(scenario.events))
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
                got = (sorted(answer.values), sorted(set(answer.contested)))
                assert got == expected(row, trust, ties), (name, trust, ties, row,
                                                           query.chain)
    finally:
        engine.drop()
        engine.close()
