"""The package's layers (pyproject.toml `[tool.importlinter]`): dsl, compiler, runtime,
engine, memory, then the surfaces (api, cli, mcp, web, lsp); no module imports one of a
layer above its own, directly or through any other module. Checked by import-linter."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_no_import_runs_up_the_layers():
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) \
        or shutil.which("lint-imports")
    assert linter, "import-linter is in the test extra: pip install -e '.[test]'"
    done = subprocess.run([linter], cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


def test_the_mcp_sdk_is_imported_only_through_tomc_mcp_sdk():
    """tomc runs on the MCP SDK's v1 and v2 (tomc/mcp/sdk.py chooses): no other module
    imports the SDK, so a difference between them is met in one place."""
    import ast

    found = []
    for path in sorted((REPO / "tomc").rglob("*.py")):
        if path == REPO / "tomc" / "mcp" / "sdk.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            found += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names
                      if n == "mcp" or n.startswith("mcp.")]
    assert not found, "import the SDK through tomc/mcp/sdk.py:\n" + "\n".join(found)

