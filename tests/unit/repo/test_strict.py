"""Under PUFFERTANK_STRICT=1 (CI, set by tests/run.sh) a skip of real work is a failure."""

import os
import subprocess
import sys

from _repo import REPO

PROBE = """
from _strict import skip_or_fail

def test_needs_something_missing():
    skip_or_fail("the package of some binding is not installed")
"""


def run_probe(tmp_path, strict: str | None):
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "PUFFERTANK_STRICT"}
    if strict is not None:
        env["PUFFERTANK_STRICT"] = strict
    env["PYTHONPATH"] = str(REPO / "tests")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_probe.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


def test_outside_ci_missing_work_is_a_skip(tmp_path):
    out = run_probe(tmp_path, None)
    assert out.returncode == 0 and "1 skipped" in out.stdout, out.stdout


def test_under_strict_missing_work_fails_with_the_reason(tmp_path):
    out = run_probe(tmp_path, "1")
    assert out.returncode == 1 and "1 failed" in out.stdout, out.stdout
    assert "the package of some binding is not installed (PUFFERTANK_STRICT=1" in out.stdout


def test_ci_runs_the_suite_strict():
    script = (REPO / "tests" / "run.sh").read_text()
    assert 'PUFFERTANK_STRICT=1 "$VENV/bin/pytest" tests' in script
