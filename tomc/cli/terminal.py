"""What a terminal gets that a pipe does not: colour (unless NO_COLOR is set), a progress
bar on runs that last more than a second, and stored text made harmless: on a terminal,
control characters in what tomc prints (a value someone recorded may hold an escape
sequence that retitles the window, clears the screen or hides text, or a bidi override that
reorders a line) are shown escaped (`\x1b`, `\u202e`); only tomc's own colours pass.

    guard_stdout()   # once, at start: sys.stdout escapes when it is a terminal
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import TextIO

import typer

PROGRESS_AFTER = 1.0  # seconds: shorter runs show no bar at all


def is_terminal() -> bool:
    """Whether stdout is a terminal (not a pipe, a file or a test runner's buffer)."""
    return sys.stdout.isatty()


def colour_enabled() -> bool:
    """Colour on terminals only, and never when NO_COLOR is set (https://no-color.org)."""
    return is_terminal() and not os.environ.get("NO_COLOR")


def paint(text: str, colour: str) -> str:
    """`text` in `colour` (a click colour name) when colour is enabled, else unchanged."""
    return typer.style(text, fg=colour, bold=True) if colour_enabled() else text


# Control characters a line does not need: C0 but tab and newline, DEL, C1, and the bidi
# controls (docs/security.md, "Text that reaches a model is data; text that reaches a
# terminal is text").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      r"\u2066-\u2069]")
# tomc's own colours (typer.style: bold and the foreground colours, reset), kept whole.
_COLOUR = re.compile(r"\x1b\[(?:0|1|22|3[0-9]|9[0-7])(?:;(?:0|1|22|3[0-9]|9[0-7]))*m")


def escaped(text: str) -> str:
    """`text` with every control character but tab, newline and tomc's colour sequences
    written as an escape (`\x1b`, `\u202e`)."""
    parts = _COLOUR.split(text)
    colours = _COLOUR.findall(text)
    out = [_CONTROL.sub(_escape, parts[0])]
    for colour, part in zip(colours, parts[1:]):
        out += [colour, _CONTROL.sub(_escape, part)]
    return "".join(out)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class EscapingStdout:
    """sys.stdout on a terminal, writing `escaped` text; `raw` is the terminal itself (for
    the progress bar, which moves the cursor)."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes for a binary stream with b""
            raise TypeError("a text stream")
        self.raw.write(escaped(text))
        return len(text)

    def __getattr__(self, name: str):  # flush, isatty, encoding, errors, fileno, ...
        return getattr(self.raw, name)


def guard_stdout() -> None:
    """Make sys.stdout escape control characters when it is a terminal (`tomc` does this
    at start); a pipe or a file gets the bytes as they are."""
    if sys.stdout is not None and sys.stdout.isatty() and not isinstance(sys.stdout,
                                                                         EscapingStdout):
        sys.stdout = EscapingStdout(sys.stdout)


class RunProgress:
    """A progress bar over `total` scenarios, shown on a terminal once the run has taken
    more than PROGRESS_AFTER seconds (and transient: it is gone when the run ends)."""

    def __init__(self, total: int, enabled: bool = True):
        self.total = total
        self.enabled = enabled and is_terminal()
        self.started = time.monotonic()
        self.done = 0
        self.bar = None  # a rich Progress, once shown
        self.task = None

    def __enter__(self) -> "RunProgress":
        return self

    def advance(self, label: str) -> None:
        """One more scenario done; `label` names it."""
        self.done += 1
        if not self.enabled or self.done >= self.total:
            return
        if self.bar is None and time.monotonic() - self.started > PROGRESS_AFTER:
            # rich loads here, not at start-up: most runs end before a bar is due.
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)
            console = Console(file=getattr(sys.stdout, "raw", sys.stdout),
                              no_color=bool(os.environ.get("NO_COLOR")))
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(label, total=self.total, completed=self.done)
        elif self.bar is not None:
            self.bar.update(self.task, completed=self.done, description=label)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
