"""A `tomc serve` for a benchmark: the server writers share, with the appliers that commit
what they submit (tomc/memory/applier.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from eval.startup import tomc_command
from tomc.runtime.keys import appliers_key
from tomc.runtime.connection import from_url


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """`tomc serve --data FOLDER` running (its appliers ready) for the block; yields its
    URL (`unix://...`). Stopped with SIGTERM after."""
    process = subprocess.Popen([*tomc_command(), "serve", "--data", str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _wait(folder, process)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        finally:
            process.stderr.close()


def _wait(folder: Path, process: subprocess.Popen) -> str:
    info = folder / "serving.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tomc serve exited: {process.stderr.read()}")
        try:
            found = json.loads(info.read_text())
        except (OSError, ValueError):
            found = None
        if found and found["owner"] == process.pid:
            url = f"unix://{found['socket']}"
            db = from_url(url)
            try:
                while not db.redis.exists(appliers_key()):
                    time.sleep(0.05)
            finally:
                db.close()
            return url
        time.sleep(0.05)
    raise RuntimeError("tomc serve did not start in 120 s")
