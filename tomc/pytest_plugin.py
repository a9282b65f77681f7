"""pytest plugin: `.tom` files with `expect` statements are collected as tests.

Registered through the `pytest11` entry point (pyproject.toml), so a project that installs
tomc runs its policies' expectations in its own suite: `pytest scenarios/`. Each scenario of
a file is a collector and each `expect` in it one test item, named by its line and text
(`-k` selects on the scenario's name and the expectation's text, as `tomc test -k` does). A
scenario runs once, on its first item; a failed expectation is reported at its .tom line,
with the actual value and where it came from. A file with diagnostics is a collection error
that shows them.

Runs use FalkorDB: the server of `FALKORDB_URL` when set, else an embedded FalkorDB started
in a temporary folder on the first run and stopped when the session ends (as `tomc run`
does, through tomc.runtime.connection.connect). `--tom-engine reference` uses the pure-Python
reference interpreter instead.

Only files holding an `expect` line are collected, so policy-only files and scenarios that
only `ask` are left alone; the imports of tomc happen when a .tom file is collected, so
suites without one pay nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Optional

import pytest

_EXPECT_LINE = re.compile(r"^[ \t]*expect\b", re.MULTILINE)
_RESOURCES = pytest.StashKey[contextlib.ExitStack]()
_DATABASE = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tomc", "tomc .tom scenarios")
    group.addoption("--tom-engine", choices=("falkordb", "reference"), default="falkordb",
                    help="engine for .tom scenarios: falkordb (default; FALKORDB_URL or an "
                         "embedded server) or reference (the pure-Python interpreter)")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.File]:
    if file_path.suffix != ".tom":
        return None
    try:
        text = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not _EXPECT_LINE.search(text):
        return None
    return TomFile.from_parent(parent, path=file_path)


def pytest_unconfigure(config: pytest.Config) -> None:
    resources = config.stash.get(_RESOURCES, None)
    if resources is not None:
        resources.close()  # stops the embedded FalkorDB and removes its folder


def _database(config: pytest.Config):
    """The session's Database, connected (or started) on first use."""
    if _DATABASE not in config.stash:
        from tomc.memory.environment import Environment

        resources = config.stash.setdefault(_RESOURCES, contextlib.ExitStack())
        url = os.environ.get("FALKORDB_URL")
        folder = None if url else Path(resources.enter_context(
            tempfile.TemporaryDirectory(prefix="tomc-pytest-")))
        config.stash[_DATABASE] = resources.enter_context(Environment(url, folder)).database
    return config.stash[_DATABASE]


class TomError(Exception):
    """A .tom file that does not check, or a run that failed: shown as text, no traceback."""


class TomFile(pytest.File):
    """A .tom file: one TomScenario per scenario that has expectations."""

    def collect(self):
        from tomc.dsl.checker import check_file

        result = check_file(self.path)
        if not result.ok:
            shown = [d.render(result.source) for d in result.diagnostics]
            if result.suppressed:
                shown.append(f"{result.path}: {result.suppressed} more errors not shown")
            raise self.CollectError("\n".join(shown))
        for scenario in result.scenarios:
            if any(q.kind == "expect" for q in scenario.queries):
                yield TomScenario.from_parent(self, name=scenario.name, scenario=scenario)


class TomScenario(pytest.Collector):
    """A scenario: one TomExpectation per `expect`; runs once, when its first item does."""

    def __init__(self, *, scenario, **kwargs):
        super().__init__(**kwargs)
        self.scenario = scenario
        self._run = None
        self._error: Optional[str] = None

    def collect(self):
        for index, query in enumerate(self.scenario.queries):
            if query.kind == "expect":
                yield TomExpectation.from_parent(self, name=f"line {query.line}: {query.text}",
                                                 index=index, query=query)

    def answers(self):
        """The scenario's answers in query order; raises TomError if the run failed."""
        if self._run is None and self._error is None:
            from tomc.engine import factory as engines
            from tomc.runner import run_scenario
            from tomc.runtime.errors import DatabaseUnavailable

            engine = self.config.getoption("tom_engine")
            try:
                db = _database(self.config) if engines.stored(engine) else None
                self._run = run_scenario(self.scenario, engine, db, keep=False)
            except DatabaseUnavailable as err:
                where = f"{self.scenario.path}:{err.origin[0]}: " if err.origin else ""
                self._error = f"{where}database unavailable: {err}"
        if self._error is not None:
            raise TomError(self._error)
        return self._run.answers


class TomExpectation(pytest.Item):
    """One `expect` statement; fails with the actual value, at its .tom line."""

    def __init__(self, *, index: int, query, **kwargs):
        super().__init__(**kwargs)
        self.index = index
        self.query = query
        self.answer = None

    def runtest(self) -> None:
        self.answer = self.parent.answers()[self.index]
        if not self.answer.passed:
            raise TomError(self._failure())

    def _failure(self) -> str:
        from tomc.cli.report import analysis_lines, provenance_lines, ready_lines
        from tomc.analysis.answer import AnalysisAnswer
        from tomc.readiness import ReadyAnswer

        a = self.answer
        head = f"{self.path}:{self.query.line}: {self.query.text}"
        if isinstance(a, AnalysisAnswer):
            return "\n".join([head, *analysis_lines(a)[1:]])
        if isinstance(a, ReadyAnswer):
            return "\n".join([head, *ready_lines(a)[1:]])
        return "\n".join([head, f"      actual: {a.shown}", *provenance_lines(a)])

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TomError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, self.query.line - 1, f"{self.parent.name}: {self.query.text}"
