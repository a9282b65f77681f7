"""Completion (tomc/lsp/completion.py) by context, on the functions the language server
calls; tests/test_lsp.py goes through a real LSP client session."""

from __future__ import annotations

import pytest

from tomc.dsl.parser import parse
from tomc.lsp.completion import complete
from tomc.lsp.symbols import Symbols

TEXT = """policy p {
  source wiki authority 2
  predicate tags.all many
  procedure deploy {
    requires qa.status = signed
  }
}

scenario s {
  agents Maya, Finance
  rooms chat

  Maya, Finance enter chat
  Finance sets refund.status = approved
}
"""
SYMBOLS = Symbols(parse(TEXT, "s.tom"), TEXT, "s.tom")


def labels(typed: str) -> dict[str, str]:
    """The candidates (label -> kind) with `typed` written on a new last line of s."""
    text = TEXT[:TEXT.rindex("}")] + "  " + typed + "\n}\n"
    line = text[:text.rindex("}")].count("\n")
    return {c.label: c.kind for c in complete(text, line, len(typed) + 3, SYMBOLS)}


AGENTS = {"Maya": "agent", "Finance": "agent"}
KEYS = {"tags.all": "key", "refund.status": "key"}


@pytest.mark.parametrize("typed, expected", [
    ("Maya tells ", AGENTS),
    ("Maya tells Finance ", KEYS),
    ("Maya tells Finance ref", KEYS),  # the word being typed is the client's to filter
    ("ask explain Maya > Finance ", KEYS),
    ("ask explain Maya > ", AGENTS),
    ("in ", {"chat": "room"}),
    ("in chat: ", KEYS),
    ("Maya moves box to ", {}),  # a container: a value, not a declared name
    ("claim k = v from ", {"wiki": "source", **AGENTS}),
    ("claim k = v from wiki to ", {"all": "keyword", **AGENTS}),
    ("claim k = v from wiki to Maya, ", AGENTS),
    ("claim k = v from wiki by ", AGENTS),
    ("ask ready ", {"deploy": "procedure"}),
    ("ask ready deploy for ", AGENTS),
    ("ask common_ground Maya, ", AGENTS),
    ("expect who_knows refund.status up_to_date = {", AGENTS),
    ("expect common_ground Maya, Finance = {", KEYS),
    ("expect Maya believes refund.status = {", {}),
    ("expect Maya believes refund.status contested by ", {}),
    ("expect Maya believes refund.status supported by ", {"wiki": "source", **AGENTS}),
    ("rooms ", {}),
])
def test_names_of_the_kind_that_goes_there(typed, expected):
    assert labels(typed) == expected


def test_keywords_only_where_the_grammar_takes_them():
    assert set(labels("Maya ")) >= {"enters", "moves", "tells", "says", "retracts"}
    assert "believes" not in labels("Maya ")
    assert set(labels("expect Maya believes refund.status ")) == {
        "is", "unknown", "contested", "supported"}
    assert set(labels("ask Maya believes refund.status ")) == {"at", "on"}
    assert labels("Maya @ ") == {}  # a syntax error before the cursor: nothing fits


def test_use_policy_offers_shipped_and_inline_policies():
    text = "use policy \n" + TEXT
    found = {c.label: c.kind for c in complete(text, 1, 12, SYMBOLS)}
    assert found == {"p": "policy", "default": "policy", "hitom": "policy"}


def test_an_error_above_the_cursor_does_not_end_completion():
    text = TEXT.replace("  Maya, Finance enter chat\n", "  Maya, Finance entr chat\n")
    text = text[:text.rindex("}")] + "  Maya enters \n}\n"
    line = text[:text.rindex("}")].count("\n")
    assert [c.label for c in complete(text, line, 15, SYMBOLS)] == ["chat"]
