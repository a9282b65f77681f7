"""Shared fixtures: one real FalkorDB for the whole test session (never a mock).

`FALKORDB_URL` points the tests at a server; otherwise an embedded FalkorDB starts in a
temporary data folder and stops when the session ends.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tomc.runtime.connection import connect

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

# Golden inputs are read by test_golden.py, not collected by the tomc pytest plugin (some
# are broken on purpose).
collect_ignore_glob = ["golden/*.tom"]


def pytest_configure(config):
    """The quick run (`-m "not slow"`, README "Run the tests") checks each property on 10
    generated examples instead of 100, unless HYPOTHESIS_PROFILE chooses (tests/strategies.py
    reads it when the property tests are collected, after this)."""
    if "not slow" in (config.getoption("markexpr") or ""):
        os.environ.setdefault("HYPOTHESIS_PROFILE", "quick")


def pytest_collection_modifyitems(config, items):
    """The cluster tests (6 servers of their own) run only when a marker expression names
    them (`-m cluster`): so `-m "not slow"` means what it says, and leaves them out too."""
    if "cluster" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if "cluster" not in item.keywords]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if "cluster" in i.keywords])
        items[:] = kept


@pytest.fixture(scope="session")
def db(tmp_path_factory):
    """A live Database shared by every test that needs FalkorDB."""
    with connect(os.environ.get("FALKORDB_URL"), tmp_path_factory.mktemp("falkordb")) as database:
        yield database


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """A data folder for CLI runs that start their own embedded FalkorDB."""
    return tmp_path_factory.mktemp("cli-data")


@pytest.fixture
def fresh(db):
    """make(name) -> a memory name no other test uses, dropped before and after."""
    from tomc.memory import catalog

    names = []

    def make(name: str) -> str:
        catalog.drop(db, name)
        names.append(name)
        return name

    yield make
    for name in names:
        catalog.drop(db, name)
