"""`tomc fmt`: the formatter gives back the same program (docs/semantics.md section 5, invariant 6),
is idempotent, quotes names only where needed, and the command rewrites, checks and reports
errors with the documented exit codes."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from strategies import valid_files
from tomc.cli.main import app
from tomc.dsl import ast
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse


def program(node: ast.Node) -> dict:
    """The program a node stands for: node types and fields, without spans or comments."""
    return node.canonical()


def fmt(text: str) -> str:
    return format_file(parse(text))


# ---------------------------------------------------------------- properties


@given(valid_files())
def test_formatted_text_parses_to_the_same_program(file):
    assert program(parse(format_file(file))) == program(file)


@given(valid_files())
def test_formatting_is_idempotent(file):
    text = format_file(file)
    assert fmt(text) == text


COMMENT = "   # a comment, with \"quotes\" and { braces }"


def _blank_after(line: str) -> str:
    return line + "\n"


_LAYOUTS = [
    lambda line: line,
    lambda line: line + COMMENT,
    lambda line: "\t " + line,
    _blank_after,
    lambda line: line + "\r",  # CRLF
]


def _code(text: str) -> list[str]:
    """The lines of `text` that are not blank."""
    return [line for line in text.split("\n") if line.strip()]


@given(valid_files(max_events=10), st.lists(st.sampled_from(_LAYOUTS), min_size=1, max_size=8))
def test_comments_and_layout_do_not_change_the_program(file, layouts):
    text = format_file(file)
    lines = text.split("\n")
    messy = "\n".join(layouts[i % len(layouts)](line) for i, line in enumerate(lines))
    assert program(parse(messy)) == program(file)
    formatted = fmt(messy)
    assert program(parse(formatted)) == program(file)
    assert fmt(formatted) == formatted
    assert formatted.count("# a comment") == messy.count("# a comment")  # every comment kept
    bare = fmt(messy.replace(COMMENT, ""))
    assert _code(bare) == _code(text)
    if _blank_after not in layouts:  # a blank line between two events stays (as one)
        assert bare == text


def test_a_blank_line_between_two_groups_of_events_stays():
    """Regression: `tomc fmt` dropped the blank line that parts two phases of a story."""
    text = ("scenario s {\n  agents A, B\n  rooms r\n\n  A, B enter r\n  A says x = 1\n\n\n"
            "  # phase two\n  B exits r\n  A says x = 2\n\n  expect B believes x = 1\n}\n")
    assert fmt(text) == text.replace("\n\n\n", "\n\n")
    assert fmt(fmt(text)) == fmt(text)


def test_comments_stay_in_a_policy_procedure_the_canonical_order_moves():
    """Regression: a policy's procedure written after its sections comes out before them,
    and took the sections' comments along while its own stayed behind."""
    text = ("policy p {\n  depth 2\n\n  on tell:\n    # only the listener\n"
            "    listener adopts\n\n  procedure deploy {\n    # the first step\n"
            "    requires qa.status = signed\n    requires freeze.date  # any date\n"
            "    # nothing more\n  }\n}\n")
    assert fmt(text) == (
        "policy p {\n  depth 2\n\n  procedure deploy {\n    # the first step\n"
        "    requires qa.status = signed\n    requires freeze.date  # any date\n"
        "    # nothing more\n  }\n\n  on tell:\n    # only the listener\n"
        "    listener adopts\n}\n")


# ---------------------------------------------------------------- golden examples

MESSY = """\
use   policy default   # the shipped one
scenario sally_anne {
  agents Sally,Anne , "O'Brien \\"x\\""
    rooms room, "the hall"
  Sally,Anne enter room
  in room: marble is in basket
  Sally exits room
  Anne moves marble to box
  "O'Brien \\"x\\"" enters "the hall"
  "O'Brien \\"x\\"" says "refund 4411".status = approved
  claim freeze.date = 2026-10-17 from Anne at 2026-10-13 valid from 2026-10-14T09:00 to Sally,Anne
  noop   "Sally likes marbles."
  expect truth marble is in box
  expect Anne>Sally believes marble is in "basket"
  ask Sally > Anne believes marble at step 3
}
"""

CANONICAL = """\
use policy default  # the shipped one

scenario sally_anne {
  agents Sally, Anne, "O'Brien \\"x\\""
  rooms room, "the hall"

  Sally, Anne enter room
  in room: marble is in basket
  Sally exits room
  Anne moves marble to box
  "O'Brien \\"x\\"" enters "the hall"
  "O'Brien \\"x\\"" says "refund 4411".status = approved
  claim freeze.date = 2026-10-17 from Anne at 2026-10-13 valid from 2026-10-14T09:00 to Sally, Anne
  noop "Sally likes marbles."

  expect truth marble is in box
  expect Anne > Sally believes marble is in "basket"
  ask Sally > Anne believes marble at step 3
}
"""

# Grammar corners the (semantically valid) generators never produce.
CORNERS = """\
policy "odd policy" {
  depth 9
  trust authority
  source bulletin authority -3
  source "chat room" authority +7
  predicate freeze.date one
  predicate "release".requires many
  on observe:
    reveal contents
    actor > speaker adopts except actor, listener if not trusts(actor, listener)
  on claim:
    every chain over witnesses + listeners + believers + speaker adopts
}

scenario "" {
  "enter", "to", Zoë enter "in"
  in "in": "is".to = "a\\\\b\\n\\u2028\\x7f"
  claim x = 1.50 from "from" by "by" in "in"
  claim x = -0 from s to all
  noop
  noop ""
  expect truth x = {}
  expect "truth" > Zoë believes x = {enter, "enter", 2020-01-01, +1}
  expect Zoë believes x unknown
  expect Zoë believes x = unknown
  expect Zoë believes x contested by 1, enter, "two words" at step 2
  expect truth x supported by Zoë, "enter" on 2020-01-01T10:00
  ask truth "x.y" at step 0
  ask believes Zoë > "truth" x on 2020-02-03
}
"""


# Every analysis, asked and expected (docs/language.md, "Asking memory"), in canonical form.
ANALYSES = """\
scenario s {
  agents A, B, "handoff"
  rooms r

  A, B enter r
  handoff A -> "handoff" write

  ask false_beliefs
  ask false_beliefs depth 2
  expect false_beliefs = {}
  expect false_beliefs depth 2 = {A > B: k.s, "handoff" > A: k}
  ask who_knows k.s
  expect who_knows k.s up_to_date = {A}
  expect who_knows k out_of_date = {}
  expect who_knows k unknown = {A, B}
  expect who_knows k unverified = {"handoff"}
  ask handoff A -> B
  expect handoff A -> B includes = {k.s, x}
  expect handoff A -> B caveats = {}
  expect handoff A -> B excludes = {k.s: superseded, k: contested, "private".x: private, x: known}
  ask common_ground A, B
  expect common_ground A, B = {k.s}
  ask explain A > B k.s
  expect explain A k.s from step 1
  expect explain A > B k.s path = B > "handoff" > A
  ask plan_announcements k.s by A
  expect plan_announcements k.s by A best = announce
  expect plan_announcements k.s by A tells = {B}
  expect plan_announcements k.s by A private depth 2 = 0
  ask context_for A talking_to B
  expect context_for A talking_to B differ = {k.s}
  expect context_for A talking_to B first = k.s
}
"""


def test_analysis_statements_round_trip():
    assert fmt(ANALYSES) == ANALYSES
    messy = ANALYSES.replace("= {", "={ ").replace(" -> ", "->").replace(", ", " ,")
    assert program(parse(messy)) == program(parse(ANALYSES))
    assert fmt(messy) == ANALYSES


def test_golden_scenario():
    assert fmt(MESSY) == CANONICAL
    assert program(parse(CANONICAL)) == program(parse(MESSY))


def test_grammar_corners_round_trip():
    text = fmt(CORNERS)
    assert program(parse(text)) == program(parse(CORNERS))
    assert fmt(text) == text


@pytest.mark.parametrize("name", ["default", "hitom"])
def test_shipped_policies_round_trip(name):
    source = resources.files("tomc.rules").joinpath(f"{name}.tom").read_text(encoding="utf-8")
    text = fmt(source)
    assert program(parse(text)) == program(parse(source))
    assert fmt(text) == text
    assert [c.text for c in parse(text).comments] == [c.text for c in parse(source).comments]


@pytest.mark.parametrize("text, shown", [
    ("Sally", "Sally"),
    ("_tmp2", "_tmp2"),
    ("Zoë", "Zoë"),
    ("李雷", "李雷"),
    ("Enter", "Enter"),
    ("enter", '"enter"'),
    ("one", '"one"'),
    ("1st", '"1st"'),
    ("a > b", '"a > b"'),
    ("two words", '"two words"'),
    ('O\'Brien "x"', '"O\'Brien \\"x\\""'),
    ("back\\slash", '"back\\\\slash"'),
    ("new\nline\r\t", '"new\\nline\\r\\t"'),
    ("\u2028\x85\x7f", '"\\u2028\\x85\\x7f"'),
    ("", '""'),
])
def test_names_are_quoted_only_when_needed(text, shown):
    file = ast.File(items=[ast.UsePolicy(target=ast.Name(text=text))])
    assert format_file(file) == f"use policy {shown}\n"
    assert parse(format_file(file)).items[0].target.text == text


def test_empty_file_formats_to_nothing():
    assert fmt("# only a comment\n\n") == "# only a comment\n"
    assert fmt("\n\n") == ""


# ---------------------------------------------------------------- the command

runner = CliRunner()


def test_fmt_rewrites_files_in_place(tmp_path):
    path = tmp_path / "sally.tom"
    path.write_text(MESSY, encoding="utf-8")
    result = runner.invoke(app, ["fmt", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8") == CANONICAL
    assert f"reformatted: {path}" in result.stdout
    again = runner.invoke(app, ["fmt", str(path)])
    assert again.exit_code == 0 and again.stdout == ""


def test_fmt_check_writes_nothing_and_lists_files_to_change(tmp_path):
    messy, clean = tmp_path / "messy.tom", tmp_path / "clean.tom"
    messy.write_text(MESSY, encoding="utf-8")
    clean.write_text(CANONICAL, encoding="utf-8")
    result = runner.invoke(app, ["fmt", "--check", str(messy), str(clean)])
    assert result.exit_code == 1
    assert result.stdout == f"would be reformatted: {messy}\n"
    assert messy.read_text(encoding="utf-8") == MESSY
    assert runner.invoke(app, ["fmt", "--check", str(clean)]).exit_code == 0


def test_fmt_folder_means_every_tom_file_below_it(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.tom").write_text(MESSY, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not .tom", encoding="utf-8")
    result = runner.invoke(app, ["fmt", str(tmp_path)])
    assert result.exit_code == 0
    assert (tmp_path / "sub" / "a.tom").read_text(encoding="utf-8") == CANONICAL


@pytest.mark.parametrize("content, expected", [
    (b"scenario s {\n  agents A\n  A enters\n}\n", "bad.tom:3:11: error[E001]"),
    (b"scenario s {\n  noop \"\\y\"\n}\n", "bad.tom:2:8: error[E001]"),
    (b"scenario s {\n  noop \xff\n}\n", "bad.tom:2:8: error[E002]"),
    (b"scenario s {\x00}\n", "bad.tom:1:13: error[E002]"),
])
def test_fmt_reports_bad_files_and_leaves_them_alone(tmp_path, monkeypatch, content, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.tom").write_bytes(content)
    for args in (["fmt", "bad.tom"], ["fmt", "--check", "bad.tom"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert isinstance(result.exception, SystemExit)  # no traceback
        assert expected in result.stderr
        assert (tmp_path / "bad.tom").read_bytes() == content


def test_fmt_missing_file(tmp_path):
    result = runner.invoke(app, ["fmt", str(tmp_path / "nope.tom")])
    assert result.exit_code == 2
    assert "error[E002]: cannot read file" in result.stderr


def test_fmt_json(tmp_path):
    good, bad = tmp_path / "good.tom", tmp_path / "bad.tom"
    good.write_text(MESSY, encoding="utf-8")
    bad.write_text("scenario {\n}\n", encoding="utf-8")
    result = runner.invoke(app, ["fmt", "--check", "--json", str(good), str(bad)])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert report["files"] == [{"path": str(good), "status": "would be reformatted"},
                               {"path": str(bad), "status": "failed"}]
    assert [(d["line"], d["column"], d["code"]) for d in report["diagnostics"]] == [(1, 10, "E001")]
    assert result.stderr == ""
