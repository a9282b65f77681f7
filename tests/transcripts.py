"""Docs as transcripts: run the shell and Python examples of a Markdown file and compare what
they print with the output the file shows (tests/test_docs.py drives it).

The convention, in README.md and docs/*.md (docs/architecture.md, "Docs that cannot drift"):

- A ```sh block is run by bash, as one script, in a sandbox folder (below). If the next
  fence, with only blank lines between, has no language (```), it is the block's **output**:
  stdout and stderr of every command, interleaved as a terminal shows them.
- A ```python block is run by the sandbox's python; an output block after it is compared the
  same way.
- A command that exits with a status other than 0 says so in a comment that ends its line,
  `# exit 4`; the statuses of a block must be exactly those, in order. A block without an
  output block is run for its statuses alone.
- In an output block, a line `...` stands for any number of lines, and `...` within a line
  for any text on that line: shown outputs may be abridged.
- `<!-- not-run: REASON -->` on the line before a block keeps it from running (an install
  command, a server an MCP client starts, a synopsis with placeholders); the test lists each
  one as skipped with its reason. Blocks in other languages (tom, toml, lua, json) are not
  commands and are never run.
- A command ending in `&` runs in the background: its output goes to a log, not to the
  transcript (a server's lines would interleave at random), and the next command starts
  once it has printed its first line (a server says when it is ready). Background jobs
  still running when the block ends are stopped.

The sandbox is a fresh folder per Markdown file, shared by its blocks in order (a memory one
block writes, the next reads): it holds copies of scenarios/, examples/ and editors/ (a
command that writes, such as `tomc fmt`, cannot touch the repository), a `.venv/bin` with
`python` and `tomc` of the Python running the tests (also first on PATH, for docs that write
plain `tomc`), and its own data folder (`TOMC_DATA`), cache and `tmp/`. Paths under `/tmp/`
in a block are run under the sandbox's `tmp/` instead, so that runs never collide.

What legitimately varies is normalised in one place, `NORMALISE`, before comparing: the
sandbox's and the checkout's paths are shown as the docs write them (`/tmp/...`, relative
paths), and durations as `N.NNs`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
COPIED = ("scenarios", "examples", "editors")
RUNNABLE = ("sh", "python")
TIMEOUT_S = 600

_FENCE = re.compile(r"^(```+)\s*([\w+-]*)\s*$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
_EXIT = re.compile(r"#\s*exit (\d+)\s*$")
_BACKGROUND = re.compile(r"^(?P<command>[^#]*[^&\s\\])\s*&(?P<comment>\s*#.*)?$")

# (pattern, replacement), applied in order to what a block printed. `{sandbox}` and `{repo}`
# are the sandbox folder and the repository, replaced as plain text; the rest are regexes.
NORMALISE = [
    (r"{sandbox}/tmp/", "/tmp/"),
    (r"{sandbox}/", ""),
    (r"{sandbox}", "."),
    (r"{repo}/", ""),  # files of the checkout (a shipped policy) as the docs name them
    (r"\b\d+\.\d+s\b", "N.NNs"),  # pytest's "in 0.52s"
]


@dataclass
class Block:
    """A fenced block: its language, where its content starts and ends (0-based line
    indexes into the file, content only), the output block after it, the not-run reason."""

    lang: str
    start: int
    end: int
    lines: list[str]
    output: Optional["Block"] = None
    not_run: Optional[str] = None

    @property
    def abridged(self) -> bool:
        """An output block with `...` in it: regenerating would lose the abridging."""
        return any("..." in line for line in self.lines)

    @property
    def line(self) -> int:
        """The 1-based line of the opening fence, as editors show it."""
        return self.start

    def expected_exits(self) -> list[int]:
        return [int(m.group(1)) for line in self.lines for m in [_EXIT.search(line)] if m]


@dataclass
class Result:
    """What running a block gave: its normalised output and the statuses other than 0."""

    block: Block
    output: str
    exits: list[int] = field(default_factory=list)
    logs: str = ""

    def problems(self) -> list[str]:
        """Why the block does not match the document ([] when it does)."""
        found = []
        if self.exits != self.block.expected_exits():
            found.append(f"exit statuses {self.exits} where the block's `# exit N` comments "
                         f"say {self.block.expected_exits()}")
        if self.block.output is not None and not matches("\n".join(self.block.output.lines),
                                                         self.output):
            found.append("output differs from the block after it")
        return found


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, output blocks attached to their command block."""
    lines = text.split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, lang = opening.groups()
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != fence:
            j += 1
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        reason = _NOT_RUN.match(previous)
        block = Block(lang, i + 1, j, lines[i + 1:j], not_run=reason.group(1) if reason else None)
        last = found[-1] if found else None
        if (lang == "" and last is not None and last.lang in RUNNABLE and last.output is None
                and all(not line.strip() for line in lines[last.end + 1:i])):
            last.output = block
        else:
            found.append(block)
        i = j + 1
    return found


def matches(expected: str, actual: str) -> bool:
    """`actual` fits `expected`, where a line `...` is any lines and `...` in a line any text."""
    pattern = []
    for line in expected.rstrip("\n").split("\n"):
        if line.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append(".*?".join(re.escape(part) for part in line.rstrip().split("..."))
                           + r"\n")
    return re.fullmatch("".join(pattern), actual.rstrip("\n") + "\n") is not None


class Sandbox:
    """The folder a Markdown file's blocks run in (see the module docstring)."""

    def __init__(self) -> None:
        # Under /tmp, short: unix socket paths in it must stay under 108 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="tomc-doc-", dir="/tmp"))
        for name in COPIED:
            shutil.copytree(REPO / name, self.root / name)
        for name in ("tmp", "data", "cache", ".logs"):
            (self.root / name).mkdir()
        bin_dir = self.root / ".venv" / "bin"
        bin_dir.mkdir(parents=True)
        script = Path(sys.executable).parent / "tomc"
        tomc = f'exec "{script}" "$@"' if script.exists() else \
            f'exec "{sys.executable}" -m tomc "$@"'
        for name, body in (("python", f'exec "{sys.executable}" "$@"'), ("tomc", tomc)):
            (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
            (bin_dir / name).chmod(0o755)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("FALKORDB_URL", "PYTEST_ADDOPTS", "TOMC_UPDATE_GOLDEN")}
        self.env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                        PYTHONPATH=str(REPO), TOMC_DATA=str(self.root / "data"),
                        XDG_CACHE_HOME=str(self.root / "cache"), NO_COLOR="1", TERM="dumb",
                        COLUMNS="100", HOME=os.environ.get("HOME", str(self.root)))
        self.count = 0

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def normalise(self, text: str) -> str:
        for pattern, replacement in NORMALISE:
            if "{" in pattern:
                text = text.replace(pattern.format(sandbox=self.root, repo=REPO), replacement)
            else:
                text = re.sub(pattern, replacement, text)
        return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))

    def run(self, block: Block) -> Result:
        """Run one block; its output normalised, its statuses other than 0 in order."""
        self.count += 1
        source = "\n".join(block.lines).replace("/tmp/", f"{self.root}/tmp/")
        if block.lang == "python":
            path = self.root / ".logs" / f"block{self.count}.py"
            path.write_text(source + "\n", encoding="utf-8")
            done = self._call([str(self.root / ".venv" / "bin" / "python"), str(path)])
            exits = [done.returncode] if done.returncode else []
            return Result(block, self.normalise(done.stdout), exits)
        exits_file = self.root / ".logs" / f"exits{self.count}"
        logs = self.root / ".logs" / f"bg{self.count}"
        prelude = [
            "__tomc_ready() { for _ in $(seq 600); do [ -s \"$1\" ] && return 0; sleep 0.1; "
            "done; }",
            f"trap 'echo $? >> \"{exits_file}\"' ERR",
        ]
        body = []
        for n, line in enumerate(source.split("\n")):
            background = _BACKGROUND.match(line)
            if background:
                log = f'"{logs}.{n}"'
                line = (f"{background['command']} > {log} 2>&1 & __tomc_ready {log}"
                        f"{background['comment'] or ''}")
            body.append(line)
        epilogue = ["trap - ERR", "kill $(jobs -p) 2>/dev/null", "wait"]
        script = self.root / ".logs" / f"block{self.count}.sh"
        script.write_text("\n".join(prelude + body + epilogue) + "\n", encoding="utf-8")
        done = self._call(["bash", str(script)])
        exits = [int(n) for n in exits_file.read_text().split()] if exits_file.exists() else []
        background_logs = "".join(p.read_text(encoding="utf-8", errors="replace")
                                  for p in sorted(logs.parent.glob(logs.name + ".*")))
        return Result(block, self.normalise(done.stdout), exits, background_logs)

    def _call(self, argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=self.root, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)


def run_document(path: Path) -> dict[int, Result]:
    """Run every runnable, not skipped block of the file in one sandbox, in order; results by
    the block's line."""
    results = {}
    sandbox = Sandbox()
    try:
        for block in blocks(path.read_text(encoding="utf-8")):
            if block.lang in RUNNABLE and block.not_run is None:
                results[block.line] = sandbox.run(block)
    finally:
        sandbox.close()
    return results


def rewrite(path: Path, results: dict[int, Result]) -> list[Block]:
    """Regenerate mode: replace each output block that does not match with what its command
    block printed; returns the blocks rewritten. Abridged blocks are never rewritten (the
    whole output would replace the abridging): one that no longer matches stays a failure
    to edit by hand."""
    lines = path.read_text(encoding="utf-8").split("\n")
    stale = [r for r in results.values() if r.block.output is not None
             and not r.block.output.abridged
             and not matches("\n".join(r.block.output.lines), r.output)]
    for result in sorted(stale, key=lambda r: r.block.line, reverse=True):
        out = result.block.output
        lines[out.start:out.end] = result.output.split("\n") if result.output else []
    if stale:
        path.write_text("\n".join(lines), encoding="utf-8")
    return [r.block for r in stale]
