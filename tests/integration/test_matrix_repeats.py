"""`puffertank matrix --repeats` on bad input. The repeats on the real engine (samples kept, the median
reported, the measured band, a rerun inside it, a planted slowdown outside it) are
test_matrix_slowdown.py's; the comparison itself is tests/unit/matrix/test_matrix_baseline.py's."""

import subprocess
import sys

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]


def test_bad_repeats_is_a_usage_error():
    cmd = [*PUFFERTANK, "matrix", "--repeats", "0"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--repeats must be >= 1" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
