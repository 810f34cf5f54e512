"""`puffertank matrix --repeats N` on the real engine: each binding's container runs N times, its timed cells
keep every sample (the figure is their median), and a baseline comparison uses their spread as the noise
band: a rerun of the same image against itself flags nothing, a baseline 10x faster flags every timed cell."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.docker

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]
TIMED = {"step", "serial", "multiprocessing", "learn"}


def matrix(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*PUFFERTANK, "matrix", *args], capture_output=True, text=True, timeout=600)


def test_repeats_give_samples_and_a_measured_band(lib_image, tmp_path):
    first = matrix(
        "--image", lib_image, "--env", "ocean/squared", "--repeats", "2", "--report", str(tmp_path / "a")
    )  # fmt: skip
    assert first.returncode == 0, first.stdout + first.stderr
    report = json.loads((tmp_path / "a" / "matrix.json").read_text())
    assert report["provenance"]["run"]["repeats"] == 2
    timed = [r for r in report["rows"] if r["check"] in TIMED and r["status"] == "pass"]
    assert {r["check"] for r in timed} >= {"step", "serial"}
    for row in timed:
        assert len(row["samples"]) == 2 and min(row["samples"]) <= row["sps"] <= max(row["samples"]), row

    again = matrix(
        "--image", lib_image, "--env", "ocean/squared", "--repeats", "2",
        "--baseline", str(tmp_path / "a"), "--report", str(tmp_path / "b"),
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr  # default --fail-on new-failure
    comparison = json.loads((tmp_path / "b" / "matrix.json").read_text())["comparison"]
    assert comparison["counts"]["new-failure"] == 0

    for row in report["rows"]:  # the same run, as if the image before had been ten times faster
        row["samples"] = [s * 10 for s in row["samples"]]
        row["sps"] = row["sps"] * 10 if row["sps"] else row["sps"]
    (tmp_path / "fast.json").write_text(json.dumps(report))
    slower = matrix(
        "--image", lib_image, "--env", "ocean/squared", "--repeats", "2",
        "--baseline", str(tmp_path / "fast.json"), "--fail-on", "regression", "--report", str(tmp_path / "c"),
    )  # fmt: skip
    assert slower.returncode == 1, slower.stdout + slower.stderr
    changes = json.loads((tmp_path / "c" / "matrix.json").read_text())["comparison"]["changes"]
    flagged = {c["check"] for c in changes if c["kind"] == "regression"}
    assert flagged >= {"step", "serial"}, changes
    assert all(c.get("band_kind") == "measured" for c in changes if c["kind"] == "regression"), changes


def test_bad_repeats_is_a_usage_error():
    out = matrix("--repeats", "0")
    assert out.returncode == 2 and "--repeats must be >= 1" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
