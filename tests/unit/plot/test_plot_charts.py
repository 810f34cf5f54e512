"""The charts beside the tables: `puffer bench --markdown FILE` draws FILE.png from the same results
(and `--json` leaves stdout to the JSON document alone); the solved table draws its chart too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PUFFER = str(Path(sys.executable).with_name("puffer"))

pytestmark = pytest.mark.slow  # a tiny benchmark and two tiny trainings in fresh processes


def test_bench_writes_a_chart_beside_its_table(tmp_path):
    table = tmp_path / "bench.md"
    cmd = [PUFFER, "bench", "--workloads", "perf-0", "--num-envs", "2", "--peers", "serial,gym-sync"]
    cmd += ["--repeats", "1", "--scale", "0.05", "--markdown", str(table), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)  # stdout is the JSON document alone; progress went to stderr
    assert {r["peer"] for r in document["results"]} == {"serial", "gym-sync"}
    assert table.is_file() and table.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert f"chart: {table.with_suffix('.png')}" in proc.stderr


def test_solve_table_writes_a_chart(tmp_path):
    chart = tmp_path / "solve.svg"
    cmd = [sys.executable, "-m", "pufferlib.bench.solve_table", "--seeds", "1", "--envs", "ocean/bandit"]
    proc = subprocess.run([*cmd, "--chart", str(chart)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "| ocean/bandit |" in proc.stdout
    assert "<svg" in chart.read_text() and "ocean/bandit (1/1)" in chart.read_text()
