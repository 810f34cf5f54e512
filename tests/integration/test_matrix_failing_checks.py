"""Every check can go red: `puffertank matrix --plugin` on bindings with one bug each turns exactly the
check that bug belongs to red (spaces, step, serial, learn), as broken_bindings.py proves for crashes
and hangs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

PLUGIN = Path(__file__).parent / "plugins" / "failing_checks.py"
EXPECTED = {  # binding -> (the one red check, words its detail must contain)
    "test/bad-spaces": ("spaces", "rewards buffer has shape (1, 1)"),
    "test/bad-step": ("step", "observation outside Box(0.0, 1.0, (2,), float32)"),
    "test/bad-serial": ("serial", "Serial, step 2: observation outside"),
    "test/bad-learn": ("learn", "not solved within the step budget: mean return 0.000 (solved at 1.0)"),
}


@pytest.fixture(scope="module")
def matrix_run(lib_image, tmp_path_factory):
    reports = tmp_path_factory.mktemp("matrix")
    puffertank = Path(sys.executable).with_name("puffertank")
    cmd = [str(puffertank), "matrix", "--variant", "cpu", "--image", lib_image, "--plugin", str(PLUGIN)]
    cmd += ["--env", "test/bad-*", "--jobs", "2", "--report", str(reports)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    rows = json.loads((reports / "matrix.json").read_text())["rows"]
    return out, rows


def test_the_matrix_fails(matrix_run):
    out, rows = matrix_run
    assert out.returncode == 1, out.stdout + out.stderr
    assert sorted({row["env"] for row in rows}) == sorted(EXPECTED)


@pytest.mark.parametrize("env", sorted(EXPECTED))
def test_exactly_the_broken_check_is_red(matrix_run, env):
    _, rows = matrix_run
    check, words = EXPECTED[env]
    red = {row["check"]: row["detail"] for row in rows if row["env"] == env and row["status"] == "fail"}
    assert list(red) == [check], red
    assert words in red[check]
