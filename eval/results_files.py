"""Where every benchmark leaves its figures: NAME.json (the document, for tools and for the
next run to compare with) and NAME.md (the table a reader opens), side by side in one
folder: `eval/out/` by default (ignored by git, so trying a benchmark leaves the
repository clean), `--out eval/results` to replace the committed results."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "eval" / "out"
COMMITTED = REPO / "eval" / "results"


def write_results(folder: Path, name: str, document: dict, markdown: str) -> None:
    """Write `folder`/`name`.json and `folder`/`name`.md (UTF-8), making the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n",
                                         encoding="utf-8")
    (folder / f"{name}.md").write_text(markdown if markdown.endswith("\n") else markdown + "\n",
                                       encoding="utf-8")
