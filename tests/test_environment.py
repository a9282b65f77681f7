"""One Environment builds what runs (tomc/memory/environment.py; issue 35 item 1): no other
module of tomc connects to FalkorDB or constructs a checker, engine, live scenario or session
reader, so how a memory is opened is written once. And an Environment shares its
connection: sessions and engines built on a Database handed to it leave it open."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO
from tomc.api import Session
from tomc.memory.environment import Environment
from tomc.runtime.errors import TomError

# What only the Environment builds (a class, or a function that opens a connection or
# builds an engine by name), by the name it is called by.
BUILT = {"LiveChecker", "LiveScenario", "FalkorEngine", "ReferenceEngine", "EngineReader",
         "AgentReader", "CredentialReader", "ViewedMemory", "connect"}
# The Environment (the door) and what it builds with (imported by it alone).
HOME = (Path("tomc/memory/environment.py"), Path("tomc/memory/building.py"))


def _calls(tree: ast.AST):
    """(name, line) of each call of a name in BUILT, and of `engines.build`/`factory.build`."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in BUILT:
            yield func.id, node.lineno
        elif isinstance(func, ast.Attribute) and func.attr in BUILT:
            yield func.attr, node.lineno
        elif (isinstance(func, ast.Attribute) and func.attr == "build"
              and isinstance(func.value, ast.Name) and func.value.id in ("engines", "factory")):
            yield "engines.build", node.lineno


def _imported(node) -> set[str]:
    """The modules an import statement names (`from tomc.memory import building` names
    tomc.memory.building)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    return {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}


def test_only_the_environment_builds_checkers_engines_readers_and_connections():
    found = []
    for path in sorted((REPO / "tomc").rglob("*.py")):
        relative = path.relative_to(REPO)
        if relative in HOME:
            continue
        tree = ast.parse(path.read_text(), str(relative))
        found += [f"{relative}:{node.lineno}: imports tomc.memory.building" for node in
                  ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                  and "tomc.memory.building" in _imported(node)]
        # A module may build what it defines itself (an engine its own shadow copy; the
        # connection module its replicas' clients).
        own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        found += [f"{relative}:{line}: {name}(...)" for name, line in _calls(tree)
                  if name not in own]
    assert not found, ("built outside tomc/memory/environment.py and building.py (ask the "
                       "Environment instead):\n" + "\n".join(found))


def test_sessions_built_on_a_handed_database_leave_it_open(db, fresh):
    name = fresh("envshared")
    with Environment(db) as env:
        with Session.attach(name, db=env.database) as first:
            first.apply("agents Maya, Ben\nrooms chat\nMaya enters chat")
        held = env.attach(name)
        try:
            assert held.name == name and held.live.step == 1
            assert held.reader.agent is None
        finally:
            held.live.engine.close()
    # The Environment did not own the Database: it still answers.
    assert db.redis.ping()
    with Session.attach(name, db=db, as_agent="Maya") as maya:
        assert maya.agent == "Maya" and maya.step == 1


def test_an_environment_refuses_what_is_not_a_database():
    with pytest.raises(TomError) as err:
        Environment(42)
    assert err.value.diagnostics[0].code == "E143"


def test_a_reference_run_never_connects():
    env = Environment("redis://127.0.0.1:1")  # nothing listens there
    held = env.run("use policy default\nscenario s {\n  agents A\n  rooms r\n  A enters r\n}\n",
                   "<t>", engine="reference")
    assert held.live.step == 1 and held.name is None
    env.close()
