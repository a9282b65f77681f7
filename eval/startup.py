"""Start-up of the `tomc` command (issue 20): the fastest of several runs of each command,
beside the fastest of `python -c pass` taken in turn with them, so that the ratios compare
runs of the same minutes on a shared machine.

- `tomc --version`: the interpreter, typer and the command table (no command module);
- `tomc memory apply NAME --db URL 'A tells B ...'`: one event into a memory on a running
  server (import, check, compile, one transaction), as a shell loop of writes pays it;
- the same with `--data DIR` and no server there: an embedded FalkorDB is started and
  stopped around the event (reported, not a goal).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def tomc_command() -> list[str]:
    """The `tomc` console script beside this interpreter (what users run), else
    `python -m tomc`."""
    script = Path(sys.executable).with_name("tomc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tomc"]


def _elapsed_ms(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return elapsed


def measure_startup(db_url: str, folder: Path, runs: int) -> dict:
    """Min over `runs` of each command (ms) and of `python -c pass` run in turn with them;
    `db_url` is a running server, `folder` a scratch folder for the embedded runs."""
    tomc = tomc_command()
    memory = "startup-probe"
    subprocess.run([*tomc, "memory", "apply", memory, "--db", db_url, "agents A, B"],
                   check=True, capture_output=True, timeout=120)
    commands = {
        "python": [sys.executable, "-c", "pass"],
        "version": [*tomc, "--version"],
        "apply_served": [*tomc, "memory", "apply", memory, "--db", db_url],
        "apply_embedded": [*tomc, "memory", "apply", memory, "--data", str(folder)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(runs):
        for name, command in commands.items():
            event = [f"A tells B x.n = {i}"] if name.startswith("apply") else []
            if name == "apply_embedded" and i == 0:
                event = ["agents A, B", *event]
            times[name].append(_elapsed_ms(command + event))
    best = {name: min(values) for name, values in times.items()}
    return {"runs": runs, "python_ms": best["python"], "version_ms": best["version"],
            "memory_apply_ms": best["apply_served"],
            "memory_apply_embedded_ms": best["apply_embedded"],
            "version_over_python": best["version"] / best["python"],
            "memory_apply_over_python": best["apply_served"] / best["python"]}
