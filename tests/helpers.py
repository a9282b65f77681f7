"""Small helpers for tests: check .tom text, run it on FalkorDB and on the reference."""

from __future__ import annotations

from tomc.dsl.checker import check_text
from tomc.dsl.program import ScenarioModel
from tomc.runner import ScenarioRun, run_scenario


def scenario(text: str) -> ScenarioModel:
    """The one scenario of `text`; fails the test with the rendered diagnostics if invalid."""
    result = check_text(text, "test.tom")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    return result.scenarios[0]


def codes(text: str) -> list[str]:
    """The error codes `text` gets from the checker (warnings, such as W180 for a key no
    event wrote, are tested in tests/test_names_checked.py)."""
    return [d.code for d in check_text(text, "test.tom").diagnostics if d.severity == "error"]


def run_both(db, text: str) -> tuple[ScenarioRun, ScenarioRun]:
    """(FalkorDB run, reference run) of the scenario in `text`."""
    model = scenario(text)
    return run_scenario(model, "falkordb", db), run_scenario(model, "reference")


def values(run: ScenarioRun) -> list[str]:
    """Every answer as shown text, in file order."""
    return [a.shown for a in run.answers]
