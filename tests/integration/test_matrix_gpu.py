"""The `gpu` check can fail: where GPUs were requested and none is visible, the cell is red and says what it
found (torch's CUDA build, the NVIDIA driver, the devices). Without a request it skips, with the reason.

The cpu lib image with `--gpus all` is a real failing path on any machine (CI has no GPU; on a GPU box the
cpu build of torch cannot use one): the request reaches the container, torch sees no GPU. The cuda image
(`puffertank matrix --variant cuda`) is covered by the opt-in test_images_cuda.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.docker


def matrix(lib_image: str, report_dir, *options: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    argv = [sys.executable, "-m", "pufferlib.tank.cli", "matrix", "--image", lib_image, "--variant", "cpu"]
    res = subprocess.run(
        [*argv, "--env", "ocean/squared", "--report", str(report_dir), *options],
        capture_output=True,
        text=True,
        timeout=600,
    )
    cells = {row["check"]: row for row in json.loads((report_dir / "matrix.json").read_text())["rows"]}
    return res, cells


def test_requested_gpus_that_are_absent_fail_the_gpu_cell(docker_client, lib_image, tmp_path):
    res, cells = matrix(lib_image, tmp_path, "--gpus", "all")
    gpu = cells["gpu"]  # also on a GPU box: the cpu image's torch cannot use a GPU
    assert "GPUs requested (--gpus all)" in res.stdout
    assert res.returncode == 1, res.stdout + res.stderr
    assert gpu["status"] == "fail", gpu
    detail = gpu["detail"]
    assert "a GPU was requested (--gpus all on local" in detail, detail
    assert "CPU-only build" in detail  # the cpu image's torch: the CUDA situation
    assert "NVIDIA driver" in detail  # "NVIDIA driver: ..." or "no NVIDIA driver loaded ..."
    assert f"FAIL ocean/squared gpu: {detail.splitlines()[0]}" in res.stdout
    assert cells["render"]["status"] == "skip" and "no pixel observations" in cells["render"]["detail"]
    others = {check: row["status"] for check, row in cells.items() if check not in ("gpu", "learn", "render")}
    assert set(others.values()) == {"pass"}, others


def test_without_a_request_the_gpu_cell_skips_with_the_reason(docker_client, lib_image, tmp_path):
    res, cells = matrix(lib_image, tmp_path, "--gpus", "none")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "no GPUs requested" in res.stdout
    assert cells["gpu"]["status"] == "skip" and "CPU-only build" in cells["gpu"]["detail"], cells["gpu"]
