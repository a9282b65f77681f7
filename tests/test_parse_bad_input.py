"""Any input, however malformed, gives diagnostics with file:line:col, never another
exception and never a hang (docs/semantics.md section 5, invariant 7)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import valid_files
from tomc.dsl.diagnostics import CODES, DiagnosticError
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import decode, parse

PATH = "bad.tom"
# Generous: a parse takes milliseconds; the deadline catches hangs, not slowness.
bounded = settings(deadline=timedelta(seconds=5))

# Pieces of .tom text, for inputs that get past the first token.
TOKENS = ["scenario", "policy", "use", "agents", "rooms", "enter", "exits", "in", "is", "to",
          "claim", "from", "by", "at", "valid", "all", "noop", "expect", "ask", "truth",
          "believes", "unknown", "step", "on", "observe", "depth", "trust", "credulous",
          "every", "chain", "over", "witnesses", "adopts", "except", "if", "not", "trusts",
          "speaker", "listener", "predicate", "one", "many", "source", "authority", "reveal",
          "contested", "supported", "Sally", "Zoë", "x", "{", "}", "(", ")", ",", ".", ":",
          "=", ">", "+", "-", "#", '"', '"a b"', '"\\"', '"\\y"', '"\\x00"', "\\", "2020-01-01",
          "2020-13-45T99:99", "12", "-3.5", "\n", "\r\n", "\r", "\t", " ", "\x0b", "\u2028",
          "\ufeff", "\x85"]

token_soup = st.lists(st.sampled_from(TOKENS), max_size=60).map(" ".join)

_MUTATIONS = ["", "{", "}", '"', "\n", "\\", "#", ">", "=", ",", ".", ":", "\x00", "\u2028",
              "enter", " in ", "é"]


def diagnose(text: str) -> None:
    """Parse `text`; if it is rejected, every diagnostic must locate the problem."""
    try:
        parse(text, PATH)
    except DiagnosticError as err:
        assert_located(err, text)


def diagnose_bytes(raw: bytes) -> None:
    """Decode and parse `raw`, as `tomc` reads a file."""
    try:
        text = decode(raw, PATH)
    except DiagnosticError as err:
        assert_located(err, raw.decode("utf-8", "replace"))
        assert {d.code for d in err.diagnostics} == {"E002"}
        return
    diagnose(text)


def assert_located(err: DiagnosticError, source: str) -> None:
    assert err.diagnostics
    lines = source.count("\n") + 1
    for d in err.diagnostics:
        assert d.code in CODES
        assert d.span is not None
        assert 1 <= d.span.line <= lines, (d.span, d.message)
        assert d.span.column >= 1
        header = f"{PATH}:{d.span.line}:{d.span.column}: error[{d.code}]: {d.message}"
        assert d.render(source).startswith(header)
        assert d.render(None).startswith(header)


# ---------------------------------------------------------------- random input


@bounded
@given(st.binary(max_size=2000))
def test_random_bytes(raw):
    diagnose_bytes(raw)


@bounded
@given(st.text(max_size=2000))
def test_random_text(text):
    diagnose(text)


@bounded
@given(token_soup)
def test_token_soup(text):
    diagnose(text)


@bounded
@given(st.lists(st.sampled_from(["scenario s {", "policy p {", "{", "}", "agents a",
                                 "on tell:", "expect truth x = {", ""]), max_size=40))
def test_block_soup(lines):
    diagnose("\n".join(lines))


# ---------------------------------------------------------------- damaged valid files


@bounded
@given(valid_files(max_events=10), st.integers(min_value=0))
def test_truncated_valid_files(file, cut):
    text = format_file(file)
    diagnose(text[: cut % (len(text) + 1)])


@bounded
@given(valid_files(max_events=10),
       st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 3),
                          st.sampled_from(_MUTATIONS)), min_size=1, max_size=6))
def test_mutated_valid_files(file, mutations):
    text = format_file(file)
    for position, deleted, inserted in mutations:
        at = position % (len(text) + 1)
        text = text[:at] + inserted + text[at + deleted:]
    diagnose(text)
    diagnose_bytes(text.encode("utf-8"))


@bounded
@given(valid_files(max_events=10), st.integers(min_value=0))
def test_nul_byte_is_e002_where_it_is(file, position):
    text = format_file(file)
    at = position % (len(text) + 1)
    damaged = text[:at] + "\x00" + text[at:]
    line = damaged.count("\n", 0, at) + 1
    column = at - (damaged.rfind("\n", 0, at) + 1) + 1
    for attempt in (lambda: parse(damaged, PATH), lambda: decode(damaged.encode(), PATH)):
        with pytest.raises(DiagnosticError) as caught:
            attempt()
        (d,) = caught.value.diagnostics
        assert (d.code, d.span.line, d.span.column) == ("E002", line, column)


@bounded
@given(valid_files(max_events=10), st.integers(min_value=0),
       st.sampled_from([b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf",
                        b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80"]))
def test_invalid_utf8_is_e002_where_it_is(file, position, bad):
    text = format_file(file)
    at = position % (len(text) + 1)
    raw = text[:at].encode() + bad + text[at:].encode()
    with pytest.raises(DiagnosticError) as caught:
        decode(raw, PATH)
    (d,) = caught.value.diagnostics
    line_start = text.rfind("\n", 0, at) + 1
    assert (d.code, d.span.line, d.span.column) == ("E002", text.count("\n", 0, at) + 1,
                                                    at - line_start + 1)


# ---------------------------------------------------------------- extreme sizes

HUGE = 100_000


@pytest.mark.parametrize("text", [
    "{" * HUGE,
    "}" * HUGE,
    "scenario s {\n" * (HUGE // 10),
    "policy p {\n" * (HUGE // 10) + "}\n" * (HUGE // 10),
    "scenario s {\n  expect truth x = {" * (HUGE // 40),
    "scenario s {\n  expect truth x = {" + "a, " * (HUGE // 4) + "}\n}",
    "scenario s {\n  ask " + " > ".join(["a"] * (HUGE // 10)) + " believes k\n}",
    "scenario " + "n" * HUGE + " {\n}",
    'scenario "' + "é" * HUGE + '" {\n}',
    'scenario "' + "\\" * HUGE,
    'scenario "' + "a" * HUGE,
    "scenario s {\n  noop " + '"\\"' * (HUGE // 3) + "\n}",
    "#" * HUGE,
    "\n" * HUGE + "scenario",
    "9" * HUGE,
    "scenario s {\n  in r: x = " + "9" * HUGE + "\n}",
], ids=lambda text: repr(text[:24]) + f"..({len(text)})")
def test_extreme_inputs_finish_quickly(text):
    started = time.perf_counter()
    diagnose(text)
    diagnose_bytes(text.encode("utf-8"))
    assert time.perf_counter() - started < 20


def test_escaped_nul_in_a_string_is_e002():
    with pytest.raises(DiagnosticError) as caught:
        parse('scenario s {\n  noop "a\\x00"\n}\n', PATH)
    (d,) = caught.value.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("E002", 2, 8)


def test_unknown_escape_is_e001():
    with pytest.raises(DiagnosticError) as caught:
        parse('scenario "\\y" {\n}\n', PATH)
    (d,) = caught.value.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("E001", 1, 10)


def test_render_shows_the_line_of_the_diagnostic():
    source = 'scenario s {\n  noop "a\u2028b"\n  x y\n}\n'
    with pytest.raises(DiagnosticError) as caught:
        parse(source, PATH)
    (d,) = caught.value.diagnostics
    assert d.span.line == 3
    assert "3 |   x y\n" in d.render(source)
