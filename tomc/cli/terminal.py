"""What a terminal gets that a pipe does not: colour (unless NO_COLOR is set) and a progress
bar on runs that last more than a second."""

from __future__ import annotations

import os
import sys
import time
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
            console = Console(file=sys.stdout, no_color=bool(os.environ.get("NO_COLOR")))
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
