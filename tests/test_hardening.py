"""Regression tests of issue 26, item 8: each small hole found by trying tomc as an
attacker or a failing operator, closed (docs/security.md)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tomc.api import Session, TomError
from tomc.cli.main import app
from tomc.engine import memory


@pytest.fixture
def live(db):
    memory.drop(db, "hard_live")
    with Session.attach("hard_live", db=db) as session:
        session.apply("agents Maya, Billing")
        yield session
    memory.drop(db, "hard_live")


@pytest.mark.parametrize("text", ["", "   \n\t", "# only a comment", "# one\n# two\n"])
def test_an_empty_or_comment_only_text_is_bad_input(live, text):
    with pytest.raises(TomError) as refused:
        live.apply(text)
    assert refused.value.diagnostics[0].code == "E160"
    with pytest.raises(TomError):  # `ask` with nothing after it: a syntax error
        live.ask(text)
    assert [d.code for d in live.check(text)] == ["E160"]
    assert live.step == 0


@pytest.mark.parametrize("text", ["", "# nothing"])
def test_the_cli_says_so_and_exits_2(db, live, text):
    result = CliRunner().invoke(app, ["memory", "apply", "hard_live", text, "--db", db.url,
                                      "--json"])
    assert result.exit_code == 2, result.output
    assert "E160" in json.loads(result.stdout)["error"]
    assert "Traceback" not in result.output
