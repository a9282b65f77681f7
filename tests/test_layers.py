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
