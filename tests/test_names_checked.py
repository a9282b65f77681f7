"""W180: a question about a key no event wrote warns with the closest keys written (an error
under --strict / TOMC_STRICT), in the checker, the CLI, the API and the LSP; a key the
policy declares (`predicate`) and no event wrote yet stays a plain `unknown`."""

from __future__ import annotations

import warnings

import pytest
from lsprotocol import types

from test_memory import tomc
from tomc.api import Session, TomError, TomWarning
from tomc.dsl.checker import check_text
from tomc.memory import catalog
from pygls.workspace import PositionCodec
from tomc.lsp.server import _diagnostic

POLICY = "policy p {\n  predicate refund.note one\n}\n"
TEXT = POLICY + """scenario typo {
  agents Maya, Billing
  rooms chat
  expect Maya believes refund.status unknown
  Maya, Billing enter chat
  Billing says refund.status = approved
  ask Maya believes refund.staus
  expect Maya believes refund.note unknown
  ask who_knows refund.stat
}
"""
STORY = ["agents Maya, Billing, Zed", "rooms chat, vault", "Maya, Billing enter chat",
         "Billing says refund.status = approved", "Zed enters vault",
         "in vault: secret.plan = hidden"]


def test_a_misspelt_key_warns_with_the_closest_written_ones():
    result = check_text(TEXT, "typo.tom")
    assert result.ok  # warnings do not stop a run
    found = [(d.code, d.severity, d.span.line, d.hint) for d in result.diagnostics]
    # line 10: refund.staus; line 12: who_knows refund.stat. Not line 7 (asked before the
    # event that writes it) nor line 11 (declared by the policy's predicate).
    assert found == [("W180", "warning", 10, "closest keys written: `refund.status`"),
                     ("W180", "warning", 12, "closest keys written: `refund.status`")]
    rendered = result.diagnostics[0].render(TEXT)
    assert rendered.startswith("typo.tom:10:21: warning[W180]: no event has written "
                               "`refund.staus`")


def test_check_and_run_warn_and_strict_makes_it_an_error(tmp_path, db, monkeypatch):
    path = tmp_path / "typo.tom"
    path.write_text(TEXT)
    checked = tomc("check", str(path), url=db.url)
    assert checked.returncode == 0 and "warning[W180]" in checked.stderr
    strict = tomc("check", "--strict", str(path), url=db.url)
    assert strict.returncode == 2 and "error[W180]" in strict.stderr
    ran = tomc("run", "--engine", "reference", str(path), url=db.url)
    assert ran.returncode == 0 and "warning[W180]" in ran.stderr
    monkeypatch.setenv("TOMC_STRICT", "1")
    assert tomc("test", str(path), url=db.url).returncode == 2


@pytest.fixture
def story(db):
    catalog.drop(db, "names_checked")
    with Session.attach("names_checked", db=db) as session:
        session.apply("\n".join(STORY))
    yield "names_checked"
    catalog.drop(db, "names_checked")


def test_the_api_warns_and_strict_raises(db, story):
    with Session.attach(story, db=db) as session:
        with pytest.warns(TomWarning, match="closest keys written: `refund.status`"):
            answer = session.believes("Maya", "refund.staus")
        assert answer.values == [] and [w.code for w in session.warnings] == ["W180"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert session.believes("Maya", "refund.status").values == ["approved"]
        assert session.warnings == []
        assert [d.code for d in session.check("ask Maya believes refund.staus")] == ["W180"]
        session.strict = True
        with pytest.raises(TomError, match=r"error\[W180\]"):
            session.ask("who_knows refund.staus")


def test_an_agents_warning_names_only_keys_it_heard_of(db, story):
    """Maya never witnessed `secret.plan`: her warning neither hints it nor stays silent
    about a near miss (which would tell her the key exists)."""
    with Session.attach(story, db=db, as_agent="Maya") as maya, warnings.catch_warnings():
        warnings.simplefilter("ignore", TomWarning)
        maya.believes("Maya", "secret.plam")
        (warning,) = maya.warnings
        assert "secret.plan" not in (warning.hint or "")
    with Session.attach(story, db=db) as supervisor, warnings.catch_warnings():
        warnings.simplefilter("ignore", TomWarning)
        supervisor.believes("Maya", "secret.plam")
        assert "`secret.plan`" in supervisor.warnings[0].hint


def test_memory_ask_prints_the_warning_and_strict_exits_2(db, story):
    asked = tomc("memory", "ask", story, "Maya believes refund.staus", url=db.url)
    assert asked.returncode == 0 and "warning[W180]" in asked.stderr
    assert "^^^^^^^^^^^^" in asked.stderr and "Traceback" not in asked.stderr
    strict = tomc("memory", "ask", story, "--strict", "Maya believes refund.staus",
                  url=db.url)
    assert strict.returncode == 2 and "error[W180]" in strict.stderr


def test_the_lsp_shows_w180_as_a_warning():
    result = check_text(TEXT, "typo.tom")
    shown = _diagnostic(result.diagnostics[0], "typo.tom", TEXT,
                        PositionCodec(types.PositionEncodingKind.Utf16))
    assert shown.severity == types.DiagnosticSeverity.Warning and shown.code == "W180"
