"""The repository is whole: a copy of its files with nothing beside it imports Hi-ToM, runs
eval.hitom and finds its docs; no file reads or cites a folder outside the repository.

The copy holds what `git clone` would give (tracked files, plus files not yet committed that
git does not ignore); its parent folder holds nothing else, so any path that climbs out of the
repository (a sibling `shared` folder) finds nothing there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = "../" + "shared"  # written in two parts so that this file does not match itself


def _repository_files() -> list[str]:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the files of a clone are unknown")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout
    return [name for name in listed.decode("utf-8").split("\0")
            if name and (REPO / name).is_file()]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The repository's files copied into `<tmp>/repo`, alone in `<tmp>`."""
    root = tmp_path_factory.mktemp("fresh") / "repo"
    for name in _repository_files():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    assert os.listdir(root.parent) == ["repo"]
    return root


def _run(clone: Path, *args: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    """`python *args` in the clone, importing tomc and eval from it (not from this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(clone), **env_extra}
    return subprocess.run([sys.executable, *args], cwd=clone, capture_output=True, text=True,
                          env=env, timeout=300)


def test_no_file_refers_to_a_folder_beside_the_repository():
    offenders = []
    for name in _repository_files():
        try:
            text = (REPO / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files
        offenders += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1)
                      if OUTSIDE in line or re.search(r"\bshared/(design|data)/", line)]
    assert offenders == [], f"files citing {OUTSIDE}/ (a clone has no such folder)"


def test_the_docs_code_cites_are_in_the_repository():
    """docs/semantics.md and docs/falkordb.md hold what code and docs cite them for."""
    semantics = (REPO / "docs" / "semantics.md").read_text(encoding="utf-8")
    for section in ("## 1. Model", "## 2. Perspectives", "## 3. Routing", "## 4. Resolution",
                    "## 5. Invariants"):
        assert section in semantics
    falkordb = (REPO / "docs" / "falkordb.md").read_text(encoding="utf-8")
    cited = set()
    for name in _repository_files():
        if name.endswith((".py", ".md", ".cypher", ".lark", ".tom")):
            text = (REPO / name).read_text(encoding="utf-8")
            for numbers in re.findall(r"falkordb\.md,?(?: checks?)? ([\d./x, -]+\d)", text):
                cited |= set(re.findall(r"\d+\.\d+", numbers))
    assert cited, "no check cited: the pattern above no longer matches the citations"
    for number in sorted(cited):
        assert re.search(rf"^\| (?:[\d.]+/)*{re.escape(number)}[ /]", falkordb, re.M), \
            f"docs/falkordb.md has no row for check {number}"


def test_a_clone_alone_imports_hitom_and_runs_eval_hitom(clone, db, tmp_path):
    where = _run(clone, "-c", "import tomc, eval; print(tomc.__file__); print(eval.__file__)",
                 env_extra={})
    assert where.stdout.splitlines() == [str(clone / "tomc" / "__init__.py"),
                                         str(clone / "eval" / "__init__.py")], where.stderr

    out = tmp_path / "hitom"
    imported = _run(clone, "-c", "from tomc.cli.main import main; main()", "import", "hitom",
                    "-o", str(out), "--json", env_extra={})
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["records"] == 1200
    assert len(list(out.glob("hitom_*.tom"))) == 120

    checked = _run(clone, "-m", "eval.hitom", "--subset", "2", "--check", "--db", db.url,
                   env_extra={})
    assert checked.returncode == 0, checked.stderr
