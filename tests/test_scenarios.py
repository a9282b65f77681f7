"""Every example scenario: all expectations hold, and FalkorDB and the reference agree on
every answer (values and provenance)."""

from __future__ import annotations

import pytest

from conftest import SCENARIOS
from tomc.dsl.checker import check_file
from tomc.runner import run_scenario

FILES = sorted(p for p in SCENARIOS.glob("*.tom") if check_file(p).scenarios)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_scenario(db, path):
    result = check_file(path)
    assert result.ok
    for scenario in result.scenarios:
        engine = run_scenario(scenario, "falkordb", db)
        reference = run_scenario(scenario, "reference")
        assert [a.to_json() for a in engine.answers] == [a.to_json() for a in reference.answers]
        assert not engine.failed, [a.query.text for a in engine.failed]
        assert any(a.query.kind == "expect" for a in engine.answers)


def test_every_scenario_file_is_covered():
    names = {p.stem for p in FILES}
    assert {"sally_anne", "refund_handoff", "ice_cream_van", "unicode_names", "release_freeze",
            "decision_corrected", "source_order", "moved_out", "payments_outage_recall",
            "postgres_upgrade", "redis_expert", "blackboard_tasks", "helios_decision"} <= names
