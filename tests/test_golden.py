"""Golden files: tests/golden/{parse,check,compile,fmt}/NAME.tom and the output each stage
gives for it, committed next to it and reviewed in diffs.

    parse/NAME.ast.json          the AST (node types, fields, spans as "line:col-line:col")
    check/NAME.diagnostics.txt   the checker's diagnostics as `tomc check` prints them
    compile/NAME.plan.txt        the plan as `tomc compile` prints it
    fmt/NAME.formatted.txt       the canonical form `tomc fmt` writes

`TOMC_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py` rewrites every expected file
from the current code; `git diff tests/golden` then shows what changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tomc.cli.main import app
from tomc.dsl import ast
from tomc.dsl.checker import check_text
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TOMC_UPDATE_GOLDEN") == "1"


def dump(value):
    """An AST node as plain data: its type first, fields left at their defaults omitted,
    spans as `line:col-line:col`."""
    if isinstance(value, ast.Span):
        return f"{value.line}:{value.column}-{value.end_line}:{value.end_column}"
    if isinstance(value, ast.Node):
        out = {"node": type(value).__name__}
        for name, info in type(value).model_fields.items():
            field = getattr(value, name)
            if field != info.default and field not in ([], None):
                out[name] = dump(field)
        return out
    if isinstance(value, list):
        return [dump(v) for v in value]
    return value


def parse_output(path: Path) -> str:
    return json.dumps(dump(parse(path.read_text(encoding="utf-8"), path.name)), indent=1,
                      ensure_ascii=False) + "\n"


def check_output(path: Path) -> str:
    source = path.read_text(encoding="utf-8")
    result = check_text(source, path.name, base=path.parent)
    if result.ok:
        return "ok: " + ", ".join(s.name for s in result.scenarios) + "\n"
    return "\n".join(d.render(source) for d in result.diagnostics) + "\n"


def compile_output(path: Path) -> str:
    result = CliRunner().invoke(app, ["compile", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def fmt_output(path: Path) -> str:
    return format_file(parse(path.read_text(encoding="utf-8"), path.name))


STAGES = {"parse": (".ast.json", parse_output), "check": (".diagnostics.txt", check_output),
          "compile": (".plan.txt", compile_output), "fmt": (".formatted.txt", fmt_output)}
CASES = [(stage, path) for stage in STAGES for path in sorted((GOLDEN / stage).glob("*.tom"))]


@pytest.mark.parametrize("stage, path", CASES, ids=[f"{s}/{p.stem}" for s, p in CASES])
def test_golden(stage: str, path: Path):
    suffix, produce = STAGES[stage]
    expected_path = path.with_name(path.stem + suffix)
    actual = produce(path)
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"{expected_path} is missing: run with TOMC_UPDATE_GOLDEN=1"
    expected = expected_path.read_text(encoding="utf-8")
    assert actual == expected, (f"{stage} output of {path.name} differs from {expected_path.name}"
                                " (TOMC_UPDATE_GOLDEN=1 rewrites it; review the diff)")


def test_every_stage_has_cases():
    assert {stage for stage, _ in CASES} == set(STAGES)


def test_formatted_goldens_are_stable():
    """Formatting a formatted file changes nothing (the fmt goldens are fixed points)."""
    for path in sorted((GOLDEN / "fmt").glob("*.formatted.txt")):
        text = path.read_text(encoding="utf-8")
        assert format_file(parse(text, path.name)) == text
