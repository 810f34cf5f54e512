"""The learn check is budgeted by agent steps, not wall time: the same steps to solve on a quiet CPU and
on one a busy loop shares (both pinned to one core with taskset), red when the reward cannot be learnt
within the budget, and `timeout` (not `fail`) when only its wall-time hang guard stops it. Real runs of
`python -m pufferlib.smoke` in subprocesses; the unlearnable bindings are tests/integration/plugins/
unlearnable.py."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from _repo import REPO

from pufferlib.matrix_protocol import BUDGET_ENV

pytestmark = pytest.mark.slow

PLUGINS = REPO / "tests" / "integration" / "plugins"


def learn(name: str, *, pin: str = "", budget: str = "") -> dict:
    """The learn cell (its last JSON line) of `python -m pufferlib.smoke NAME --checks learn`."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{PLUGINS}", "PUFFERLIB_PLUGINS": "unlearnable"}
    env.pop(BUDGET_ENV, None)
    if budget:
        env[BUDGET_ENV] = budget
    cmd = [sys.executable, "-m", "pufferlib.smoke", name, "--checks", "learn", "--json"]
    done = subprocess.run(
        (["taskset", "-c", pin] if pin else []) + cmd, capture_output=True, text=True, env=env, timeout=600
    )
    cell = json.loads(done.stdout.strip().splitlines()[-1])
    assert cell["check"] == "learn", done.stdout + done.stderr
    return cell


@contextlib.contextmanager
def busy(cpu: str) -> Iterator[None]:
    """A busy loop pinned to `cpu` while the block runs."""
    spin = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spin.kill()
        spin.wait()


def test_the_same_steps_solve_it_on_a_shared_core():
    if shutil.which("taskset") is None:
        pytest.skip("taskset (util-linux) is missing")
    quiet = learn("ocean/squared", pin="0")
    with busy("0"):
        loaded = learn("ocean/squared", pin="0")
    for cell in (quiet, loaded):
        assert cell["status"] == "pass" and "stopped by solved" in cell["detail"], cell["detail"]
    assert loaded["steps"] == quiet["steps"], (quiet["detail"], loaded["detail"])


def test_an_unlearnable_reward_fails_red_within_its_step_budget():
    cell = learn("test/unlearnable")
    assert cell["status"] == "fail", cell["detail"]
    assert cell["detail"].startswith("AssertionError: not solved within the step budget: mean return")
    assert "of 4,096 steps" in cell["detail"] and "stopped by steps" in cell["detail"]


def test_the_hang_guard_reports_timeout_not_fail():
    """A step budget no box spends in time, and a container budget of 3 s: the guard stops it."""
    cell = learn("test/unlearnable-slow", budget="3")
    assert cell["status"] == "timeout", cell["detail"]
    assert cell["detail"].startswith("hang guard: ") and "stopped by time" in cell["detail"]
    assert cell["steps"] is not None and cell["steps"] < 10**10  # how far it got, for the report
