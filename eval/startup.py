"""Start-up of the `tomc` command (issue 20): the fastest of several runs of each command,
beside the fastest of `python -c pass` taken in turn with them, so that the ratios compare
runs of the same minutes on a shared machine.

- `tomc --version`: the interpreter, typer and the command table (no command module);
- `tomc memory apply NAME --db URL 'A tells B ...'`: one event into a memory on a running
  `tomc serve`, as a shell loop of writes pays it: the client imports neither the checker
  nor the compiler, submits the text to the memory's applier and waits for its step;
- the same with `--data DIR` and no server there: an embedded FalkorDB is started and
  stopped around the event (reported, not a goal).

Besides wall time, each command's CPU time (user + system, from the kernel's accounting of
the child) is kept: on a loaded machine the wall time includes waiting for a core, the CPU
time does not, so the CPU figure is what the command costs on an idle one. The embedded
run's CPU time is the client's only (the server it starts is a grandchild that is reaped by
it, so it is counted too when it exits cleanly).

`python -m eval.startup [--runs N] [--out eval/results]` measures on its own server and
writes startup.json and startup.md.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.results_files import DEFAULT_OUT, write_results


def tomc_command() -> list[str]:
    """The `tomc` console script beside this interpreter (what users run), else
    `python -m tomc`."""
    script = Path(sys.executable).with_name("tomc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tomc"]


def _children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _elapsed_ms(command: list[str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run of `command`."""
    cpu_before = _children_cpu_ms()
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return elapsed, _children_cpu_ms() - cpu_before


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
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(runs):
        for name, command in commands.items():
            event = [f"A tells B x.n = {i}"] if name.startswith("apply") else []
            if name == "apply_embedded" and i == 0:
                event = ["agents A, B", *event]
            wall, used = _elapsed_ms(command + event)
            times[name].append(wall)
            cpu[name].append(used)
    best = {name: min(values) for name, values in times.items()}
    best_cpu = {name: min(values) for name, values in cpu.items()}
    return {"runs": runs, "python_ms": best["python"], "version_ms": best["version"],
            "memory_apply_ms": best["apply_served"],
            "memory_apply_embedded_ms": best["apply_embedded"],
            "version_over_python": best["version"] / best["python"],
            "memory_apply_over_python": best["apply_served"] / best["python"],
            "python_cpu_ms": best_cpu["python"], "version_cpu_ms": best_cpu["version"],
            "memory_apply_cpu_ms": best_cpu["apply_served"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.startup", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (the min is kept)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    from eval.served import served  # it imports this module's tomc_command

    # Through `tomc serve`'s applier, as the memory path runs: the client only submits.
    with tempfile.TemporaryDirectory() as scratch, served(Path(scratch) / "db") as url:
        found = measure_startup(url, Path(scratch) / "embedded", args.runs)
    rows = [("python -c pass", "python"), ("tomc --version", "version"),
            ("tomc memory apply (through `tomc serve`'s applier)", "memory_apply")]
    lines = ["# Start-up (eval/startup.py)", "",
             f"The fastest of {args.runs} runs. Wall time waits for a core on a shared machine; "
             "CPU time (user + system) is what the command costs on an idle one.", "",
             "| command | wall ms | CPU ms |", "|---|---|---|"]
    lines += [f"| {label} | {found[key + '_ms']:.0f} | {found[key + '_cpu_ms']:.0f} |"
              for label, key in rows]
    lines.append(f"| tomc memory apply --data (embedded server started) | "
                 f"{found['memory_apply_embedded_ms']:.0f} | |")
    write_results(args.out, "startup", found, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
