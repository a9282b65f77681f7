"""The pytest plugin (tomc/pytest_plugin.py, entry point pytest11): `pytest scenarios/`
collects every expectation as a test item. Each test runs a real pytest in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SCENARIOS


def pytest_run(*args, cwd: Path = REPO, url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}
    if url:
        env["FALKORDB_URL"] = url
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_scenarios_folder_runs_every_expectation_as_an_item():
    tested = json.loads(subprocess.run(
        [sys.executable, "-m", "tomc", "test", "scenarios/", "--engine", "reference", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300).stdout)["tested"]
    result = pytest_run("scenarios/", "-q", "--tom-engine", "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{tested} passed" in result.stdout  # one item per expectation, as `tomc test`


def test_items_are_named_by_scenario_line_and_text_and_k_selects():
    result = pytest_run("scenarios/sally_anne.tom", "--collect-only", "-q", "-k", "box and not truth")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("scenarios/sally_anne.tom::sally_anne::line 15: expect Anne believes marble is "
            "in box") in result.stdout
    assert "line 14" not in result.stdout and "4 deselected" in result.stdout


def test_embedded_falkordb_is_started_when_no_server_is_named():
    result = pytest_run(str(SCENARIOS / "sally_anne.tom"), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout


def test_falkordb_url_is_used(db):
    result = pytest_run(str(SCENARIOS / "source_order.tom"), "-q", url=db.url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9 passed" in result.stdout


def test_failure_is_shown_at_the_tom_line(tmp_path):
    failing = tmp_path / "failing.tom"
    failing.write_text((SCENARIOS / "sally_anne.tom").read_text().replace(
        "expect Sally believes marble is in basket", "expect Sally believes marble is in box"))
    result = pytest_run("-q", "--tom-engine", "reference", cwd=tmp_path)
    assert result.returncode == 1
    assert f"{failing}:16: expect Sally believes marble is in box\n      actual: basket" \
        in result.stdout
    assert "from step 2 (line 9): in room: marble is in basket" in result.stdout
    assert "1 failed, 4 passed" in result.stdout
    assert "Traceback" not in result.stdout


def test_bad_file_is_a_collection_error_with_its_diagnostics(tmp_path):
    (tmp_path / "bad.tom").write_text(
        "scenario s {\n  agents A\n  B enters room\n  expect A believes x = 1\n}\n")
    result = pytest_run("-q", cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.tom:3:3: error[E101]: unknown agent `B`" in result.stdout


def test_files_without_expect_are_not_collected(tmp_path):
    (tmp_path / "asks.tom").write_text(
        "scenario s {\n  agents A\n  rooms r\n  A enters r\n  ask A believes x\n}\n")
    (tmp_path / "policy.tom").write_text("policy p {\n  depth 2\n}\n")
    result = pytest_run("-q", cwd=tmp_path)
    assert result.returncode == 5, result.stdout  # pytest: no tests collected
