"""Every diagnostic code: triggered by a small bad file, rendered with file:line:col and a caret."""

from __future__ import annotations

import re

import pytest

from tomc.dsl.checker import check_text
from tomc.dsl.diagnostics import CODES

S = "scenario s {{\n  agents Sally, Anne\n  rooms room, hall\n{body}\n}}\n"

CASES = {
    "E001": "scenario s {\n  agents Sally\n  Sally enters\n}\n",
    "E002": 'scenario s {\n  noop "a\\x00b"\n}\n',
    "E101": S.format(body="  Sallly enters room"),
    "E102": S.format(body="  Sally enters rooom"),
    "E103": S.format(body="  claim k.s = v from memo to all"),
    "E104": "use policy defualt\n" + S.format(body=""),
    "E110": S.format(body="  agents Sally"),
    "E120": S.format(body="  Sally enters room\n  Sally exits hall"),
    "E121": S.format(body="  Sally moves marble to box"),
    "E130": S.format(body="  agents Bob\n  expect Sally > Anne > Bob believes k unknown"),
    "E131": S.format(body="  expect Sally > Sally believes k unknown"),
    "E140": "policy p {\n  trust authority\n  source memo authority 1\n}\n"
            + S.format(body="  claim k.s = v from memo at 2026-02-30 to all"),
    "E141": S.format(body="  expect Sally believes k.s = {a, b}"),
    "E142": S.format(body="  expect false_beliefs depth 1 = {Sally > Anne: k}"),
    "E150": "policy p {\n  depth 9\n}\n" + S.format(body=""),
    "E151": "policy p {\n  on observe:\n    listener adopts\n}\n" + S.format(body=""),
    "E152": "scenario s {\n  agents " + ", ".join(f"a{i}" for i in range(400)) + "\n}\n",
    "E160": "# nothing here\n",
    "E148": S.format(body="  clock 2026-10-15\n  clock 2026-10-14"),
    "E170": S.format(body="  procedure deploy {\n    requires qa.signoff = signed\n  }\n"
                          "  ask ready deplyo for Sally"),
    "E171": "policy p {\n  procedure deploy {\n  }\n}\n" + S.format(body=""),
    "E175": S.format(body="  Sally peeks\n  Anne waits"),
    "E176": S.format(body="  Sally enters room\n  Sally is distracted\n  Sally moves k to box"),
}


# Codes only the Python API reports (a malformed argument, a statement a method does not
# take, a reused idempotency key): their cases are in tests/test_api.py and
# tests/test_applier.py (E146).
API_CODES = {"E143", "E144", "E145", "E146"}
# Codes of `tomc extract` (a model's answer and its candidates): cases in tests/test_extract.py.
EXTRACT_CODES = {"E200", "E201", "E202", "E203", "E204", "E206"}
# Codes of access tokens (tomc token, tomc mcp --http): cases in tests/test_tokens.py.
TOKEN_CODES = {"E210"}
# Search by meaning without an embedding model: cases in tests/test_recall.py.
RECALL_CODES = {"E205"}


# Warnings: the file is valid (it runs), and --strict makes them errors (tests/test_cli.py
# and tests/test_names_checked.py).
WARNING_CASES = {
    "W180": S.format(body="  Sally enters room\n  in room: k.s = v\n  ask Sally believes k.t"),
}


def test_every_code_has_a_case():
    assert set(CASES) | set(WARNING_CASES) | API_CODES | EXTRACT_CODES | TOKEN_CODES \
        | RECALL_CODES == set(CODES)


@pytest.mark.parametrize("code", sorted(WARNING_CASES))
def test_warning_is_reported_and_rendered(code):
    text = WARNING_CASES[code]
    result = check_text(text, "bad.tom")
    assert result.ok
    (diagnostic,) = result.diagnostics
    assert re.match(rf"bad\.tom:\d+:\d+: warning\[{code}\]: ", diagnostic.render(text))


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_is_reported_and_rendered(code):
    text = CASES[code]
    if code == "E002":
        text = text.replace("\\x00", "\x00")
    result = check_text(text, "bad.tom")
    assert not result.ok
    assert code in [d.code for d in result.diagnostics]
    diagnostic = next(d for d in result.diagnostics if d.code == code)
    rendered = diagnostic.render(text)
    assert re.match(rf"bad\.tom:\d+:\d+: error\[{code}\]: ", rendered)
    if diagnostic.span is not None:
        assert "^" in rendered


def test_unknown_agent_suggests_the_closest_name():
    result = check_text(CASES["E101"], "bad.tom")
    (diagnostic,) = result.diagnostics
    assert diagnostic.hint == "did you mean `Sally`?"
    assert diagnostic.span.line == 4 and diagnostic.span.column == 3


def test_syntax_error_says_what_was_expected():
    (diagnostic,) = check_text(CASES["E001"], "bad.tom").diagnostics
    assert "expected" in diagnostic.hint
    assert diagnostic.render(CASES["E001"]).startswith("bad.tom:3:15: error[E001]")


def test_every_code_is_documented():
    from conftest import REPO
    docs = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code in CODES:
        assert f"## {code}" in docs, code


def test_several_errors_are_reported_together():
    text = S.format(body="  Bob enters room\n  Sally enters cellar")
    assert [d.code for d in check_text(text, "bad.tom").diagnostics] == ["E101", "E102"]


def test_a_lone_surrogate_escape_is_unreadable_source():
    text = 'scenario s {\n  agents A, "B\\ud800"\n}\n'
    assert [d.code for d in check_text(text, "bad.tom").diagnostics] == ["E002"]


def test_an_authority_beyond_64_bits_is_an_invalid_policy():
    text = "policy p {\n  source big authority 9223372036854775808\n}\n" + S.format(body="")
    (diagnostic,) = check_text(text, "bad.tom").diagnostics
    assert diagnostic.code == "E150" and diagnostic.span.line == 2


def test_at_most_100_errors_are_kept_per_scenario():
    body = "".join(f"  B{i} enters room\n" for i in range(500))
    result = check_text(S.format(body=body), "bad.tom")
    assert len(result.diagnostics) == 100 and result.suppressed == 400 and not result.ok


def test_a_policy_may_raise_the_perspective_limit():
    agents = ", ".join(f"a{i}" for i in range(400))  # 160,000 chains at depth 2
    raised = check_text("policy big {\n  depth 2\n  limits perspectives 200000\n}\n"
                        f"use policy big\nscenario s {{\n  agents {agents}\n}}\n", "big.tom")
    assert raised.ok, [d.message for d in raised.diagnostics]
    (diagnostic,) = check_text(CASES["E152"], "big.tom").diagnostics
    assert "160,000 perspectives" in diagnostic.message
    assert diagnostic.span.line == 2 and "limits perspectives 160000" in diagnostic.hint


def test_unknown_procedure_suggests_the_closest():
    (diagnostic,) = check_text(CASES["E170"], "p.tom").diagnostics
    assert diagnostic.code == "E170" and "`deplyo`" in diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.column) == (7, 13)
    assert diagnostic.hint == "did you mean `deploy`?"


def test_a_procedure_is_known_from_its_line_on_and_named_once():
    body = ("  ask ready deploy\n  procedure deploy {\n    requires k\n  }\n"
            "  procedure deploy {\n    requires j\n  }")
    codes = [d.code for d in check_text(S.format(body=body), "p.tom").diagnostics]
    assert codes == ["E170", "E110"]


def test_a_scenario_procedure_cannot_take_its_policys_name():
    policy = "policy p {\n  procedure deploy {\n    requires k\n  }\n}\n"
    body = "  procedure deploy {\n    requires j\n  }"
    (diagnostic,) = check_text(policy + S.format(body=body), "p.tom").diagnostics
    assert diagnostic.code == "E110" and "procedure `deploy`" in diagnostic.message


def test_a_walk_through_links_is_bounded_in_the_language_and_the_api():
    """`follow N` and `within N` above MAX_HOPS are refused before anything is read: each
    walk is one graph read that builds its levels whole (a huge N would hold the server)."""
    from tomc.api import Session, TomError
    body = '  Sally enters room\n  Sally says a.b = "@c"\n'
    for ask, word in (("ask explain Sally a.b follow 9", "follow 9"),
                      ("ask about c within 1000000000", "within 1000000000")):
        text = S.format(body=body + "  " + ask)
        (diagnostic,) = check_text(text, "bad.tom").diagnostics
        assert diagnostic.code == "E130" and f"`{word}` is outside 0..8" in diagnostic.message
    with Session.open(name="walk_bound", engine="reference") as session:
        session.apply("agents A\nrooms r\nA enters r\nA says a.b = \"@c\"")
        assert session.follow("a.b", hops=8).to_json()
        for call in (lambda: session.follow("a.b", hops=10 ** 9),
                     lambda: session.about("c", within=-1)):
            with pytest.raises(TomError) as refused:
                call()
            assert refused.value.diagnostics[0].code == "E130"
