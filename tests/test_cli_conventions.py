"""CLI conventions of issue 14: --version, -k, fmt --diff, eval, --format, exit 5, colour,
runtime errors at the .tom line. Runs use the reference engine unless FalkorDB is the point."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import SCENARIOS
from tomc import __version__
from tomc.cli.main import app
from tomc.cli.terminal import RunProgress, colour_enabled, paint
from tomc.runtime.connection import connect

runner = CliRunner()
REF = ["--engine", "reference"]


def tomc(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture()
def failing(tmp_path) -> Path:
    """sally_anne with its line-16 expectation wrong."""
    path = tmp_path / "failing.tom"
    path.write_text((SCENARIOS / "sally_anne.tom").read_text().replace(
        "expect Sally believes marble is in basket", "expect Sally believes marble is in box"))
    return path


@pytest.fixture()
def bad(tmp_path) -> Path:
    path = tmp_path / "bad.tom"
    path.write_text("scenario s {\n  agents A\n  B enters room\n}\n")
    return path


def test_version():
    result = tomc("--version")
    assert result.exit_code == 0 and result.output.strip() == f"tomc {__version__}"


def test_help_is_not_broken_mid_sentence():
    result = tomc("--help")
    lines = [line.strip(" │") for line in result.output.splitlines()]
    assert not any(line.rstrip().endswith(" as") for line in lines), result.output


def test_nothing_tested_exits_5(tmp_path):
    (tmp_path / "asks.tom").write_text(
        "scenario s {\n  agents A\n  rooms r\n  A enters r\n  ask A believes x\n}\n")
    result = tomc("test", tmp_path, *REF)
    assert result.exit_code == 5
    assert "nothing was tested: no `expect` statement" in result.output


def test_k_selects_scenarios_and_expectations():
    by_name = tomc("test", SCENARIOS, "-k", "SALLY", *REF)
    assert by_name.exit_code == 0 and "5 passed, 0 failed" in by_name.output
    assert "refund" not in by_name.output
    by_text = tomc("test", SCENARIOS / "sally_anne.tom", "-k", "Anne > Sally", *REF)
    assert by_text.exit_code == 0 and "1 passed, 0 failed" in by_text.output
    none = tomc("test", SCENARIOS, "-k", "no such thing", *REF)
    assert none.exit_code == 5 and "no expectation selected by -k" in none.output


def test_fmt_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    path = tmp_path / "ugly.tom"
    ugly = "scenario s {\nagents   A\n  rooms r\n}\n"
    path.write_text(ugly)
    result = tomc("fmt", "--diff", path)
    assert result.exit_code == 1
    assert f"--- {path}\n+++ {path} (formatted)" in result.output
    assert "-agents   A\n+  agents A" in result.output
    assert path.read_text() == ugly
    clean = tomc("fmt", "--diff", SCENARIOS / "sally_anne.tom")
    assert clean.exit_code == 0 and "---" not in clean.output


def test_eval_answers_a_question_without_editing_the_file(db):
    before = (SCENARIOS / "sally_anne.tom").read_text()
    result = tomc("eval", SCENARIOS / "sally_anne.tom", "ask Anne > Sally believes marble",
                  "--db", db.url)
    assert result.exit_code == 0, result.output
    assert "ask  Anne > Sally believes marble.location = basket" in result.output
    assert "PASS" not in result.output  # the file's own expects are not run
    assert (SCENARIOS / "sally_anne.tom").read_text() == before
    failed = tomc("eval", SCENARIOS / "sally_anne.tom", "expect Anne believes marble is in basket",
                  *REF, "--json")
    assert failed.exit_code == 1
    assert json.loads(failed.output)["answers"][0]["passed"] is False


def test_eval_bad_question_is_a_diagnostic():
    result = runner.invoke(app, ["eval", str(SCENARIOS / "sally_anne.tom"),
                                 "ask Bob believes marble", *REF])
    assert result.exit_code == 2
    assert "<question>:1:5: error[E101]: unknown agent `Bob`" in result.output
    assert "Traceback" not in result.output
    moved = runner.invoke(app, ["eval", str(SCENARIOS / "sally_anne.tom"), "Anne exits room", *REF])
    assert moved.exit_code == 2
    assert ("<question>:1:1: error[E144]: tomc eval answers `ask` and `expect` statements, "
            "not `Anne exits room`") in moved.output


def test_format_github_annotates_failed_expectations_and_diagnostics(failing, bad):
    result = tomc("test", failing, *REF, "--format", "github")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"::error file={failing},line=16,col=3,title=tomc expect::expect Sally believes "
        "marble is in box: does not hold%0Aactual: basket")
    checked = tomc("check", bad, "--format", "github")
    assert checked.exit_code == 2
    assert f"::error file={bad},line=3,col=3,title=tomc E101::unknown agent `B`" in checked.output
    assert checked.output.splitlines()[-1].startswith("::notice title=tomc::1 file(s) checked, ")


def test_format_github_says_what_a_passing_run_did():
    """Nothing to annotate still prints one notice: an empty log reads as nothing ran."""
    result = tomc("test", SCENARIOS / "sally_anne.tom", *REF, "--format", "github")
    assert result.exit_code == 0
    assert result.output == "::notice title=tomc::5 passed, 0 failed\n"


def test_format_sarif_locates_results(failing, bad):
    result = tomc("test", failing, *REF, "--format", "sarif")
    log = json.loads(result.output)
    assert log["version"] == "2.1.0"
    (found,) = log["runs"][0]["results"]
    assert found["ruleId"] == "expect"
    region = found["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 16, "startColumn": 3}
    checked = json.loads(tomc("check", bad, "--format", "sarif").output)
    diag = next(r for r in checked["runs"][0]["results"] if r["ruleId"] == "E101")
    assert diag["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert "E101" in [r["id"] for r in checked["runs"][0]["tool"]["driver"]["rules"]]


def test_format_junit_and_json(failing, bad):
    suites = ET.fromstring(tomc("test", failing, *REF, "--format", "junit").output)
    suite = suites.find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "1"
    (failure,) = suites.iter("failure")
    assert failure.text.startswith(f"{failing}:16:3: expect Sally believes marble is in box")
    check = ET.fromstring(tomc("check", bad, SCENARIOS / "sally_anne.tom",
                               "--format", "junit").output)
    assert [s.get("failures") for s in check.iter("testsuite")] == ["2", "0"]
    as_json = json.loads(tomc("test", failing, *REF, "--format", "json").output)
    assert as_json["tested"] == 5 and as_json["summary"] == "4 passed, 1 failed"


def test_no_colour_in_pipes_or_with_no_color(monkeypatch):
    result = tomc("run", SCENARIOS / "sally_anne.tom", *REF)
    assert "\x1b[" not in result.output
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_enabled() and paint("PASS", "green") == "PASS"
    monkeypatch.delenv("NO_COLOR")
    assert colour_enabled() and paint("PASS", "green") != "PASS"


def test_progress_only_on_a_terminal_and_after_a_second(monkeypatch):
    with RunProgress(3) as quiet:  # not a terminal under pytest
        quiet.started -= 5
        quiet.advance("a")
        assert quiet.bar is None
    monkeypatch.setattr("tomc.cli.terminal.is_terminal", lambda: True)
    with RunProgress(3) as fast:
        fast.advance("a")
        assert fast.bar is None  # under a second so far
    with RunProgress(3) as slow:
        slow.started -= 5
        slow.advance("a")
        assert slow.bar is not None
        slow.advance("b")


def test_runtime_error_points_at_the_tom_line(tmp_path):
    """A FalkorDB that refuses writes (no memory left) fails the first statement: the error
    names the .tom line the plan's source map gives it, and the exit code is 3."""
    with connect(None, tmp_path / "oom") as db:
        db.redis.config_set("maxmemory-policy", "noeviction")
        db.redis.config_set("maxmemory", 1)
        try:
            result = runner.invoke(app, ["run", str(SCENARIOS / "sally_anne.tom"), "--db", db.url])
        finally:
            db.redis.config_set("maxmemory", 0)
    assert result.exit_code == 3
    assert (f"{SCENARIOS / 'sally_anne.tom'}:4: database unavailable while running "
            "`scenario sally_anne`") in result.output
    assert "     4 | scenario sally_anne {" in result.output
    assert "Traceback" not in result.output
