"""Every shell command and Python example in README.md and docs/*.md runs, and prints what
the docs show (tests/transcripts.py has the convention and the harness).

One test per block: a runnable block passes when its output and exit statuses are those the
document shows; a block marked `<!-- not-run: REASON -->` is reported as skipped with its
reason. The blocks of one file run once, in order, in one sandbox, the first time one of its
tests needs them.

`TOMC_UPDATE_GOLDEN=1 python -m pytest tests/test_docs.py` (the switch of the golden files)
rewrites each output block that no longer matches with what its command printed, except
abridged blocks (`...`), which fail with the diff to edit by hand. Review with
`git diff README.md docs/`.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from transcripts import REPO, RUNNABLE, Result, blocks, rewrite, run_document

UPDATE = os.environ.get("TOMC_UPDATE_GOLDEN") == "1"
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CASES = [(path, block) for path in DOCUMENTS for block in blocks(path.read_text(encoding="utf-8"))
         if block.lang in RUNNABLE]
_RUNS: dict[Path, dict[int, Result]] = {}
_REWRITTEN: set[tuple[Path, int]] = set()  # (file, line) of blocks whose output was rewritten


def _results(path: Path) -> dict[int, Result]:
    if path not in _RUNS:
        _RUNS[path] = run_document(path)
        if UPDATE:
            _REWRITTEN.update((path, b.line) for b in rewrite(path, _RUNS[path]))
    return _RUNS[path]


@pytest.mark.parametrize("path, block", CASES,
                         ids=[f"{p.relative_to(REPO)}:{b.line}" for p, b in CASES])
def test_doc_block(path: Path, block):
    where = f"{path.relative_to(REPO)}:{block.line}"
    if block.not_run is not None:
        pytest.skip(f"{where}: not-run: {block.not_run}")
    result = _results(path)[block.line]
    problems = result.problems()
    if (path, block.line) in _REWRITTEN:  # exit statuses are written by hand
        problems = [p for p in problems if not p.startswith("output")]
    if not problems:
        return
    shown = "\n".join(block.output.lines) if block.output is not None else ""
    diff = "\n".join(difflib.unified_diff(shown.split("\n"), result.output.split("\n"),
                                          "shown in the doc", "printed", lineterm=""))
    pytest.fail(f"{where}: {'; '.join(problems)} (TOMC_UPDATE_GOLDEN=1 rewrites the outputs "
                f"that are not abridged)\n{diff or result.output}\n"
                + (f"background jobs printed:\n{result.logs}" if result.logs else ""),
                pytrace=False)


def test_the_docs_have_runnable_examples():
    """The convention is in use: a README without runnable blocks would pass vacuously."""
    readme = [b for p, b in CASES if p.name == "README.md" and b.not_run is None]
    assert len(readme) >= 5
    assert any(b.output is not None for b in readme)
