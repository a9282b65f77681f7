"""`python -m eval.bench --smoke` runs end to end and writes every figure issue 11 asks for,
each a number (no absolute times are asserted: the machine is shared; the committed
eval/results/bench.md holds the full run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO

REQUIRED = ["write_roundtrip_p50_ms", "read_roundtrip_p50_ms", "event_p50_ms", "event_p99_ms",
            "event_p50_over_roundtrip", "event_p99_over_roundtrip", "broadcast_16x3_p50_ms",
            "broadcast_16x3_over_roundtrip", "broadcast_32x2_p50_ms", "broadcast_12x3_p50_ms",
            "nested_read_p50_over_roundtrip", "round_trips_per_event", "graphs",
            "used_bytes_per_graph", "scale_p50_largest_over_smallest",
            "hitom_engine_over_reference", "startup_python_ms", "startup_version_ms",
            "startup_version_over_python", "startup_memory_apply_ms",
            "startup_memory_apply_over_python", "startup_memory_apply_embedded_ms",
            "served_event_p50_over_roundtrip", "served_event_p99_over_roundtrip",
            "served_over_in_process", "used_bytes_per_5_agent_memory", "writers_8_over_1"]


@pytest.mark.slow
def test_smoke_run_writes_every_required_figure_as_a_number(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "eval.bench", "--smoke", "--out",
                           str(tmp_path)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    figures = json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))
    for key in REQUIRED:
        assert isinstance(figures[key], (int, float)) and not isinstance(figures[key], bool), key
        assert figures[key] >= 0, key
    assert figures["graphs"] > 0 and figures["round_trips_per_event"] >= 1
    assert figures["hitom_agreement"] == 1.0  # engine = reference on every record it ran
    assert figures["sections"]["folder"]["graphs_left"] == 0  # a folder run keeps nothing
    table = (tmp_path / "bench.md").read_text(encoding="utf-8")
    assert "| event p50 / write round trip |" in table
    assert "| start-up: `tomc --version` |" in table
    assert "| memory path event p50 / in-process event p50 |" in table
    assert set(figures["writers_events_per_second"]) == {"1", "2", "4", "8"}


def test_the_many_agents_run_writes_memory_and_attach_time_per_event(tmp_path):
    """`python -m eval.agents` (issue 26: memory and attach time per event at 50 agents),
    on a few events: every figure a number."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "eval.agents", "--events", "20", "--out",
                           str(tmp_path)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    figures = json.loads((tmp_path / "agents.json").read_text(encoding="utf-8"))
    assert figures["agents"] == 50 and figures["events"] == 20
    for key in ("used_bytes_per_event", "attach_ms_per_event", "attach_agent_ms_per_event",
                "attach_last_over_first"):
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert "| attach per event (all / the second half) |" in \
        (tmp_path / "agents.md").read_text(encoding="utf-8")
