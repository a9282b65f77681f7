"""Aliases (docs/language.md, "Aliases"): `alias NAME = OTHER, ...` in a policy makes a
subject's other names the subject, in events, questions and search alike, on both engines;
`describe` suggests the aliases a memory might declare."""

from __future__ import annotations

import json

import pytest

from test_memory import tomc
from tomc.api import Session
from tomc.dsl.checker import check_text
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse
from tomc.memory import catalog

FILE = """policy named {
  depth 2
  alias Asha = asha, "A. Rao"
  predicate asha.skills many
  procedure staff {
    requires asha.role = lead
  }
}

use policy named

scenario crew {
  agents Maya, Billing
  rooms chat
  Maya, Billing enter chat
  Billing says asha.role = lead
  Maya says "A. Rao".team = payments
  Billing says asha.skills = go
  Billing says Asha.skills = rust
  Billing says pager.owner = "@asha"
  expect Maya believes Asha.role = lead
  expect Maya believes "A. Rao".role = lead
  expect Billing believes asha.team = payments
  expect Maya believes Asha.skills = {go, rust}
  expect about asha for Maya keys = {Asha.role, Asha.skills, pager.owner}
  expect Maya believes pager.owner = "@Asha"
  expect search "what does A. Rao do" keys = {Asha.role, Asha.skills, Asha.team, pager.owner}
  expect ready staff for Maya = ready
}
"""


def test_an_alias_parses_and_formats_back():
    policy = parse(FILE, "crew.tom").items[0]
    (decl,) = policy.aliases
    assert (decl.name.text, [a.text for a in decl.aliases]) == ("Asha", ["asha", "A. Rao"])
    formatted = format_file(parse(FILE, "crew.tom"))
    assert '  alias Asha = asha, "A. Rao"\n' in formatted
    assert parse(formatted, "crew.tom").canonical() == parse(FILE, "crew.tom").canonical()


@pytest.mark.parametrize("policy, message", [
    ('alias Asha = asha\n  alias Omar = asha', "alias `asha` is declared for `Asha` and `Omar`"),
    ("alias Asha = asha, asha", "alias `asha` is declared twice"),
    ("alias Asha = Asha", "alias `Asha` names a subject that has aliases of its own"),
    ("alias Asha = asha\n  alias asha = ash", "alias `asha` names a subject that has aliases"),
])
def test_an_alias_names_one_subject(policy, message):
    result = check_text(f"policy p {{\n  {policy}\n}}\n", "p.tom")
    assert [d.code for d in result.diagnostics] == ["E110"], result.diagnostics
    assert message in result.diagnostics[0].message


@pytest.mark.parametrize("engine", ["falkordb", "reference"])
def test_events_and_questions_read_an_alias_as_its_subject(db, engine, tmp_path):
    """Every expectation of FILE holds: keys, link values, `about`, procedures, `many`
    declarations and search all read `asha` and `A. Rao` as `Asha`."""
    path = tmp_path / "crew.tom"
    path.write_text(FILE, encoding="utf-8")
    ran = tomc("run", str(path), "--engine", engine, "--json", url=db.url)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    with Session.open(str(path), engine=engine, db=db) as session:
        assert set(session.believes("Maya", "asha.skills").values) == {"go", "rust"}
        assert session.warnings == []  # `asha.role` is written: no W180


def test_a_memory_searches_and_describes_by_alias(db, tmp_path):
    """Through the CLI: a memory imported from FILE keeps its aliases (its policy is
    written out in full); `search "A. Rao"` finds Asha's facts; `describe` lists the
    aliases declared and suggests those that are not."""
    path = tmp_path / "crew.tom"
    path.write_text(FILE.replace("  Billing says pager.owner",
                                 "  Billing says refunds.open = 2\n"
                                 "  Billing says refund.status = approved\n"
                                 "  Billing says pager.owner"), encoding="utf-8")
    catalog.drop(db, "crew_aliases")
    try:
        loaded = tomc("memory", "import", "crew_aliases", str(path), url=db.url)
        assert loaded.returncode == 0, loaded.stderr
        found = tomc("memory", "search", "crew_aliases", "A. Rao", "--json", url=db.url)
        assert found.returncode == 0, found.stderr
        answer = json.loads(found.stdout)
        assert answer["terms"] == ["rao", "asha"]  # `a` is a question word
        assert {h["key"] for h in answer["hits"]} == {"Asha.role", "Asha.team", "Asha.skills",
                                                     "pager.owner"}  # = "@Asha"
        described = tomc("memory", "describe", "crew_aliases", "--json", url=db.url)
        assert described.returncode == 0, described.stderr
        shown = json.loads(described.stdout)
        assert shown["aliases"] == {"Asha": ["asha", "A. Rao"]}
        assert shown["suggested_aliases"] == [["refund", "refunds"]]
        text = tomc("memory", "describe", "crew_aliases", url=db.url).stdout
        assert 'alias Asha = asha, A. Rao' in text
        assert "maybe one subject: refund, refunds (declare `alias refund = refunds`" in text
        asked = tomc("memory", "ask", "crew_aliases", "ask Billing believes asha.team",
                     "--json", url=db.url)
        assert asked.returncode == 0, asked.stderr
        assert '"payments"' in asked.stdout and "W180" not in asked.stderr
    finally:
        catalog.drop(db, "crew_aliases")
