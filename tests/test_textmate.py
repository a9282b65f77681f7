"""The VS Code extension (editors/vscode/): its manifest checked against the files it names,
and its TextMate grammar run by a real TextMate engine (textmate-grammar-python, a port of
vscode-textmate on Oniguruma) over the example scenarios, and checked against the Lark
grammar's keywords."""

from __future__ import annotations

import json
import logging
import re

import pytest
from textmate_grammar.parsers.base import LanguageParser

from conftest import REPO, SCENARIOS
from tomc import __version__
from tomc.dsl.parser import keywords

EXTENSION = REPO / "editors" / "vscode"
GRAMMAR = json.loads((EXTENSION / "syntaxes" / "tom.tmLanguage.json").read_text())
KEYWORD_SCOPES = ("keyword.", "support.function.", "constant.language.")
EXAMPLES = sorted(SCENARIOS.glob("*.tom")) + sorted((REPO / "tomc" / "rules").glob("*.tom"))

logging.getLogger("textmate_grammar").setLevel(logging.ERROR)  # it logs every skipped name


@pytest.fixture(scope="module")
def grammar() -> LanguageParser:
    return LanguageParser(GRAMMAR)


def tokens(grammar: LanguageParser, text: str) -> list[tuple[int, int, str, list[str]]]:
    """(line, column, text, scopes) of every token, 0-based as the engine gives them."""
    element = grammar.parse_string(text)
    return [(line, column, token, scopes) for (line, column), token, scopes in element.flatten()]


def test_the_extension_manifest_names_files_that_are_there():
    """package.json's `contributes` (what VS Code loads) against the folder: every path
    exists and is valid JSON, the language and grammar agree with each other and with the
    grammar file, comments are `#` as in the Lark grammar."""
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", manifest["name"])  # what vsce accepts
    assert manifest["version"] == __version__.split("+")[0] or __version__ == "0+unknown"
    assert {"publisher", "engines", "displayName", "description"} <= manifest.keys()
    assert manifest["engines"]["vscode"].startswith("^")
    (language,) = manifest["contributes"]["languages"]
    (grammar,) = manifest["contributes"]["grammars"]
    assert language["id"] == grammar["language"] == "tom"
    assert language["extensions"] == [".tom"]
    assert grammar["scopeName"] == GRAMMAR["scopeName"] == "source.tom"
    assert (EXTENSION / grammar["path"]).resolve() == (
        EXTENSION / "syntaxes" / "tom.tmLanguage.json").resolve()
    configuration = json.loads((EXTENSION / language["configuration"]).read_text())
    assert configuration["comments"]["lineComment"] == "#"
    lark = (REPO / "tomc" / "dsl" / "grammar.lark").read_text()
    assert 'COMMENT: /#[^\\n]*/' in lark
    for pattern in configuration["indentationRules"].values():
        re.compile(pattern)
    assert (EXTENSION / "README.md").is_file()


def _regexes(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("match", "begin", "end") and isinstance(value, str):
                yield value
            else:
                yield from _regexes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _regexes(item)


def test_regexes_are_portable():
    """Every pattern also compiles as a Python (and so an ECMAScript-like) regex: no
    Oniguruma-only syntax, so other engines (Sublime, GitHub linguist) read it too."""
    for pattern in _regexes(GRAMMAR):
        re.compile(pattern)
        assert not re.search(r"\\[hHGAzZ]|\\p\{|\(\?<[a-zA-Z]", pattern), pattern


@pytest.mark.parametrize("word", keywords())
def test_every_keyword_of_the_grammar_is_highlighted(grammar, word):
    found = [t for t in tokens(grammar, f"{word}\n") if t[2] == word]
    assert found and found[0][3][-1].startswith(KEYWORD_SCOPES), found


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_files_tokenize(grammar, path):
    text = path.read_text(encoding="utf-8")
    found = tokens(grammar, text)
    scopes_at = {(line, column): scopes[-1] for line, column, _, scopes in found}
    lines = text.split("\n")
    for number, line in enumerate(lines):
        stripped = line.lstrip()
        start = len(line) - len(stripped)
        if stripped.startswith("#"):
            assert scopes_at.get((number, start)) == "comment.line.number-sign.tom", line
        for word in ("expect", "ask", "scenario", "policy", "agents", "claim"):
            if stripped.startswith(word + " "):
                assert scopes_at.get((number, start), "").startswith("keyword."), line
        code = "" if stripped.startswith("#") else line.split(" #")[0]
        for string in re.finditer(r'"(?:[^"\\]|\\.)*"', code):
            assert scopes_at.get((number, string.start())) in (
                "string.quoted.double.tom", "string.quoted.double.path.tom",
                "entity.name.section.tom", "variable.other.object.tom",
                "variable.other.property.tom"), line  # a quoted name, a path, a key's part
        block = re.match(r"(scenario|policy)\s+(\S+)", stripped)
        if block:
            column = start + block.start(2)
            assert scopes_at.get((number, column)) == "entity.name.section.tom", line


def test_trailing_comments_and_values(grammar):
    text = 'claim db.host = "a # b" from wiki at 2026-05-01 to all  # 1: adopted\n'
    scoped = {token: scopes[-1] for _, _, token, scopes in tokens(grammar, text)}
    assert scoped['"a # b"'] == "string.quoted.double.tom"
    assert scoped["# 1: adopted"] == "comment.line.number-sign.tom"
    assert scoped["2026-05-01"] == "constant.numeric.date.tom"


@pytest.mark.parametrize("text, key", [
    ("procedure release {\n  requires release.requires = done\n}\n", "release.requires"),
    ("expect truth open.status = done\n", "open.status"),
    ("claim agents.to = all from wiki\n", "agents.to"),
    ('expect truth "a b".enter = x\n', '"a b".enter'),
])
def test_a_dotted_key_is_a_key_whatever_its_words(grammar, text, key):
    """Regression: `release.requires` showed `requires` as a keyword; a key's parts are
    names, whichever words of the language they spell."""
    subject, predicate = key.rsplit(".", 1)
    found = [(token, scopes[-1]) for _, _, token, scopes in tokens(grammar, text)]
    at = found.index((subject, "variable.other.object.tom"))
    assert found[at:at + 3] == [(subject, "variable.other.object.tom"),
                                (".", "punctuation.accessor.tom"),
                                (predicate, "variable.other.property.tom")], found
    first = text.split()[0]
    assert found[0] == (first, found[0][1]) and found[0][1].startswith("keyword."), found


@pytest.mark.parametrize("target, scope", [
    ('"release_policy.tom"', "string.quoted.double.path.tom"),
    ('"../policies/strict.tom"', "string.quoted.double.path.tom"),
    ('"rules/strict"', "string.quoted.double.path.tom"),  # a / makes it a path too
    ("default", "entity.name.section.tom"),
    ('"my policy"', "entity.name.section.tom"),  # a quoted policy name, not a file
])
def test_use_policy_tells_a_file_path_from_a_policy_name(grammar, target, scope):
    """Regression: a file path in `use policy "x.tom"` was scoped as a section name. The
    grammar tells them apart as tomc/dsl/policies.py does: quoted, and with a `/` or a
    `.tom` ending."""
    found = {token: scopes[-1] for _, _, token, scopes in tokens(grammar, f"use policy {target}\n")}
    assert found["use"] == found["policy"] == "keyword.control.use.tom"
    assert found[target] == scope, found
