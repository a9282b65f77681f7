"""Trying a benchmark leaves the repository clean (issue 40): every `python -m eval.X`
writes under `eval/out/` (ignored by git) unless `--out` names another folder, such as
`eval/results` to replace the committed results."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from eval.results_files import COMMITTED, DEFAULT_OUT

REPO = Path(__file__).resolve().parents[1]


def test_the_default_output_folder_is_ignored_by_git():
    probe = DEFAULT_OUT / "hitom.md"
    found = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=REPO)
    assert found.returncode == 0, f"{probe} is not ignored by git"


def test_every_benchmark_with_an_out_option_defaults_to_the_ignored_folder():
    modules = [p for p in (REPO / "eval").glob("*.py") if '"--out"' in p.read_text()]
    assert len(modules) >= 8
    for module in modules:
        text = module.read_text()
        option = re.search(r'add_argument\("--out"[^)]*\)', text, re.S).group(0)
        if "default=" in option:  # no default: nothing is written unless asked
            assert "default=DEFAULT_OUT" in option, f"{module.name}: {option}"


def test_a_hitom_run_writes_eval_out_and_leaves_the_committed_results(tmp_path):
    committed = (COMMITTED / "hitom.md").read_bytes()
    out = DEFAULT_OUT / "hitom.md"
    out.unlink(missing_ok=True)
    run = subprocess.run([sys.executable, "-m", "eval.hitom", "--subset", "1"], cwd=REPO,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert out.exists()
    assert (COMMITTED / "hitom.md").read_bytes() == committed
