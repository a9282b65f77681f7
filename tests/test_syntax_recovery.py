"""Several syntax errors per file (the parse resynchronises on the next line), an unclosed
`{` reported at the `{` with its block's name, and keyword did-you-mean."""

from __future__ import annotations

import pytest

from tomc.dsl.checker import check_text
from tomc.dsl.diagnostics import DiagnosticError
from tomc.dsl.parser import MAX_SYNTAX_ERRORS, parse, parse_statements


def errors(text: str) -> list[tuple[int, int, str, str]]:
    """(line, column, message, hint) of each diagnostic of `text`."""
    return [(d.span.line, d.span.column, d.message, d.hint)
            for d in check_text(text, "t.tom").diagnostics]


def test_every_syntax_error_of_a_file_is_reported():
    text = ("scenario s {\n  agents A, B\n  rooms r\n  A enters\n  A @ r\n"
            "  A moves marble\n  B enters r\n}\n")
    found = errors(text)
    assert [(line, message) for line, _, message, _ in found] == [
        (4, "unexpected end of line"), (5, "unexpected character '@'"),
        (6, "unexpected end of line")]
    assert found[2][3] == "expected `to`"


def test_a_broken_block_header_does_not_hide_the_errors_inside():
    found = errors("scenario a b {\n  agents A\n  A entr r\n}\n")
    assert [line for line, *_ in found] == [1, 3]


def test_unclosed_brace_is_reported_at_the_brace_with_the_scenario_name():
    (only,) = errors("use policy default\n\nscenario sally {\n  agents A\n  rooms r\n")
    assert only[:3] == (3, 16, "`{` of scenario `sally` is never closed")
    assert "`}`" in only[3]


def test_unclosed_brace_before_the_next_scenario():
    text = "scenario one {\n  agents A\n\nscenario two {\n  agents B\n}\n"
    assert errors(text) == [(1, 14, "`{` of scenario `one` is never closed",
                             "add a line with `}` after its last statement")]


def test_unclosed_policy_brace_names_the_policy():
    (only,) = errors('policy "strict" {\n  depth 2\n')
    assert only[:3] == (1, 17, "`{` of policy `strict` is never closed")


def test_braces_in_strings_and_comments_do_not_count():
    (only,) = errors('scenario s {  # {\n  agents A\n  noop "{"\n')
    assert only[:2] == (1, 12)


@pytest.mark.parametrize("line, word, suggestion", [
    ("  Sally entr room", "entr", "enters"),
    ("  Sally, Anne entr room", "entr", "enter"),
    ("  Sally exts room", "exts", "exits"),
    ("  agnets Sally", "agnets", "agents"),
    ("  expct Sally believes marble = box", "expct", "expect"),
    ("  Sally mvoes marble to box", "mvoes", "moves"),
])
def test_misspelt_keyword_gets_a_suggestion(line, word, suggestion):
    text = f"scenario s {{\n  agents Sally, Anne\n  rooms room\n{line}\n}}\n"
    (only,) = errors(text)
    assert only[0] == 4 and only[1] == line.index(word) + 1
    assert only[3] == f"did you mean `{suggestion}`?"


def test_live_statements_recover_too():
    with pytest.raises(DiagnosticError) as caught:
        parse_statements("Sally entr room\nSally moves marble\n")
    assert [d.span.line for d in caught.value.diagnostics] == [1, 2]


def test_errors_are_capped():
    text = "scenario s {\n" + "  A @\n" * (MAX_SYNTAX_ERRORS + 10) + "}\n"
    with pytest.raises(DiagnosticError) as caught:
        parse(text, "t.tom")
    assert len(caught.value.diagnostics) == MAX_SYNTAX_ERRORS


def test_unknown_names_are_reported_beside_syntax_errors():
    """Regression: a syntax error hid every unknown-name error of the file. The rest of the
    file (its lines in error taken out) is checked for unknown agents, rooms and sources;
    a name a line in error mentions may be declared there, so it is not reported."""
    text = ("scenario s {\n  agents A, B\n  rooms r\n  A, B entr r\n  C enters r\n"
            "  A exits kitchen\n  A says x = 1 2\n  claim y = 2 from wiki\n"
            "  expect D believes x = 1\n}\n")
    found = [(d.span.line, d.code, d.message) for d in check_text(text, "t.tom").diagnostics]
    assert found == [(4, "E001", "unexpected `entr`"), (5, "E101", "unknown agent `C`"),
                     (6, "E102", "unknown room `kitchen`"), (7, "E001", "unexpected `2`"),
                     (8, "E103", "unknown source `wiki`"), (9, "E101", "unknown agent `D`")]
    declared_on_a_bad_line = "scenario s {\n  agents A, B B\n  A enters r\n}\n"
    assert [d.code for d in check_text(declared_on_a_bad_line, "t.tom").diagnostics] == [
        "E001", "E102"]
