"""The command line: outputs and exit codes 0 (pass), 1 (expectation failed), 2 (bad input),
3 (database unavailable). Runs use the session's FalkorDB through --db."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import SCENARIOS
from tomc.cli.main import app

runner = CliRunner()


def tomc(*args: str):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture()
def db_args(db):
    return ["--db", db.url]


def test_run_prints_answers_with_provenance_and_passes(db_args):
    result = tomc("run", SCENARIOS / "sally_anne.tom", *db_args)
    assert result.exit_code == 0, result.output
    assert "PASS expect Sally believes marble is in basket" in result.output
    assert "ask  Sally believes marble.location = basket" in result.output
    assert "from step 2 (line 9): in room: marble is in basket" in result.output
    assert "witnesses: Anne, Sally" in result.output
    assert result.output.strip().endswith("5 passed, 0 failed")


def test_failed_expectation_exits_1_and_shows_the_actual_value(db_args, tmp_path):
    bad = tmp_path / "wrong.tom"
    bad.write_text((SCENARIOS / "sally_anne.tom").read_text().replace(
        "expect Sally believes marble is in basket", "expect Sally believes marble is in box"))
    result = tomc("run", bad, *db_args)
    assert result.exit_code == 1
    assert "FAIL expect Sally believes marble is in box" in result.output
    assert "actual: basket" in result.output


@pytest.mark.parametrize("verb", ["run", "check", "compile", "test"])
def test_bad_input_exits_2_with_a_diagnostic_and_no_traceback(verb, tmp_path, db_args):
    bad = tmp_path / "bad.tom"
    bad.write_text("scenario s {\n  agents A\n  B enters room\n}\n")
    extra = db_args if verb in ("run", "test") else []
    result = runner.invoke(app, [verb, str(bad), *extra])
    assert result.exit_code == 2
    assert f"{bad}:3:3: error[E101]: unknown agent `B`" in result.output
    assert "Traceback" not in result.output


def test_missing_file_exits_2():
    result = tomc("check", "no/such/file.tom")
    assert result.exit_code == 2
    assert "error[E002]: cannot read file" in result.output


def test_unreachable_database_exits_3_with_one_line():
    result = runner.invoke(app, ["run", str(SCENARIOS / "sally_anne.tom"),
                                 "--db", "redis://127.0.0.1:1"])
    assert result.exit_code == 3
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tomc: database unavailable:")


def test_run_json(db_args):
    result = tomc("run", SCENARIOS / "refund_handoff.tom", "--json", *db_args)
    assert result.exit_code == 0
    payload = json.loads(result.output)
    answers = payload["scenarios"][0]["answers"]
    assert payload["summary"] == "46 passed, 0 failed"
    ask = next(a for a in answers if a["kind"] == "ask")
    assert ask["value"] == "approved" and ask["provenance"][0]["step"] == 2


def test_check_json_lists_diagnostics(tmp_path):
    bad = tmp_path / "bad.tom"
    bad.write_text("scenario s {\n  agents A\n  A exits hall\n}\n")
    result = tomc("check", bad, "--json")
    assert result.exit_code == 2
    payload = json.loads(result.output)
    assert [d["code"] for d in payload["diagnostics"]] == ["E102"]


def test_reference_engine_gives_the_same_report(db_args):
    engine = tomc("run", SCENARIOS / "ice_cream_van.tom", *db_args)
    reference = tomc("run", SCENARIOS / "ice_cream_van.tom", "--engine", "reference")
    assert engine.output == reference.output


def test_test_command_over_a_folder_writes_junit(db_args, tmp_path):
    junit = tmp_path / "junit.xml"
    result = tomc("test", SCENARIOS, "--junit", junit, *db_args)
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].endswith("passed, 0 failed")
    assert "<testsuites" in junit.read_text()


def test_compile_puts_user_values_only_in_parameters():
    result = tomc("compile", SCENARIOS / "unicode_names.tom", "--json")
    assert result.exit_code == 0
    plan = json.loads(result.output)["plans"][0]
    statements = plan["setup"] + [s for e in plan["events"] for s in e["statements"]]
    user_values = ["Zoë", "李雷", "O'Brien", "DETACH", "crème", "fridge", "ready 🎂", "$param",
                   "`tick`", "会议室", "back office", "order.status", "café"]
    for statement in statements:
        for value in user_values:
            assert value not in statement["cypher"], (value, statement["template"])
    assert any("O'Brien" in json.dumps(s["params"], ensure_ascii=False) for s in statements)


def test_compile_text_shows_statements_in_order():
    result = tomc("compile", SCENARIOS / "sally_anne.tom")
    assert result.exit_code == 0
    out = result.output
    assert out.index("// step 1 (line 8)") < out.index("// step 4 (line 11)")
    assert "template observation.cypher" in out and "params:" in out


def test_help_lists_every_verb():
    result = tomc("--help")
    for verb in ("run", "check", "compile", "test", "fmt", "import"):
        assert verb in result.output


def test_embedded_database_in_a_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("FALKORDB_URL", raising=False)
    result = tomc("run", SCENARIOS / "sally_anne.tom", "--data", tmp_path / "data")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "appendonlydir").is_dir()


def test_data_folder_with_a_server_is_bad_input(tmp_path):
    result = runner.invoke(app, ["run", str(SCENARIOS / "sally_anne.tom"),
                                 "--db", "redis://127.0.0.1:1", "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert "--data" in result.output and "drop one of them" in result.output


def test_an_empty_folder_is_bad_input(tmp_path):
    result = tomc("test", tmp_path, "--engine", "reference")
    assert result.exit_code == 2
    assert "no .tom file under" in result.output


def test_one_scenario_name_in_two_files_is_bad_input(tmp_path):
    for name in ("one", "two"):
        (tmp_path / f"{name}.tom").write_text("scenario same {\n  agents A\n}\n")
    result = tomc("run", tmp_path / "one.tom", tmp_path / "two.tom", "--engine", "reference")
    assert result.exit_code == 2
    assert "error[E110]: scenario `same` is also defined in" in result.output


def test_junit_to_an_unwritable_path_is_bad_input(tmp_path):
    result = tomc("test", SCENARIOS / "sally_anne.tom", "--engine", "reference",
                  "--junit", tmp_path)
    assert result.exit_code == 2
    assert "cannot write the JUnit report" in result.output


def _folder(tmp_path, count: int):
    """`count` small scenarios, each in its own file, named folderN."""
    for i in range(count):
        (tmp_path / f"f{i}.tom").write_text(
            f"scenario folder{i} {{\n  agents A, B\n  rooms r\n  A, B enter r\n"
            f"  A says k.status = v{i}\n  expect B believes k.status = v{i}\n}}\n")
    return tmp_path


def _graphs_of_folder(db) -> list[str]:
    return [g for g in db.graph_names() if g.startswith("tom:folder")]


def test_a_folder_run_drops_each_scenarios_graphs_once_answered(db, db_args, tmp_path):
    # Bounded server memory for a folder of any size (issue 11): nothing is left behind.
    result = tomc("test", _folder(tmp_path, 12), *db_args)
    assert result.exit_code == 0, result.output
    assert "12 passed, 0 failed" in result.output
    assert _graphs_of_folder(db) == []
    assert not db.redis.keys("tom:folder*")


def test_keep_graphs_leaves_them_for_inspection(db, db_args, tmp_path):
    result = tomc("run", _folder(tmp_path, 2), "--keep-graphs", *db_args)
    assert result.exit_code == 0, result.output
    assert sorted(_graphs_of_folder(db)) == [
        "tom:folder0:mind:A", "tom:folder0:mind:B", "tom:folder0:world",
        "tom:folder1:mind:A", "tom:folder1:mind:B", "tom:folder1:world"]
    db.redis.delete(*_graphs_of_folder(db), *db.redis.keys("tom:folder*"))
