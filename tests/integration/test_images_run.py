"""`puffertank run` end to end, through the real command: exit codes, the host user, the workspace, shared
memory, timeouts, clear errors, and no container left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]


def puffertank(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 180):
    return subprocess.run(
        [*PUFFERTANK, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def managed(docker_client) -> list:
    return docker_client.containers.list(all=True, filters={"label": "puffertank.command=run"})


def test_runs_as_host_user_in_the_workspace_and_cleans_up(docker_client, lib_image, tmp_path):
    before = {c.id for c in managed(docker_client)}
    script = "id -u; id -g; pwd; df -k /dev/shm | tail -n 1; touch made-in-container; exit 3"
    res = puffertank("run", "--image", lib_image, "--gpus", "none", "--", "sh", "-c", script, cwd=tmp_path)
    assert res.returncode == 3, res.stderr
    uid, gid, cwd, shm = res.stdout.splitlines()
    assert (int(uid), int(gid), cwd) == (os.getuid(), os.getgid(), "/workspace")
    assert int(shm.split()[1]) >= 1 << 20, f"/dev/shm smaller than 1 GiB: {shm}"
    made = tmp_path / "made-in-container"
    assert made.exists() and made.stat().st_uid == os.getuid()
    assert {c.id for c in managed(docker_client)} == before


def test_streams_stdout_and_stderr_apart(lib_image, tmp_path):
    res = puffertank("run", "--image", lib_image, "--", "sh", "-c", "echo out; echo err >&2", cwd=tmp_path)
    assert (res.returncode, res.stdout, res.stderr) == (0, "out\n", "err\n")


def test_timeout_kills_and_removes(docker_client, lib_image, tmp_path):
    before = {c.id for c in managed(docker_client)}
    res = puffertank("run", "--image", lib_image, "--timeout", "3", "--", "sleep", "60", cwd=tmp_path)
    assert res.returncode == 124
    assert "timed out after 3 s" in res.stderr
    assert {c.id for c in managed(docker_client)} == before


def test_missing_image_names_the_fix():
    res = puffertank("run", "--variant", "cuda", "--image", "puffertank/lib:no-such-variant", "--", "true")
    assert res.returncode == 1
    assert "puffertank/lib:no-such-variant not found" in res.stderr


def test_missing_default_image_says_which_build(docker_client):
    from pufferlib.tank.engine import image_exists

    if image_exists(docker_client, "puffertank/lib:cuda"):
        pytest.skip("puffertank/lib:cuda exists here")
    res = puffertank("run", "--variant", "cuda", "--", "true")
    assert res.returncode == 1
    assert "Fix: puffertank build --variant cuda" in res.stderr


def test_no_command_is_a_usage_error():
    res = puffertank("run")
    assert res.returncode == 2
    assert "puffertank run [options] -- CMD" in res.stderr


def test_unreachable_daemon_names_the_address_and_fix():
    res = puffertank("run", "--", "true", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert res.returncode == 1
    assert "cannot reach the Docker engine at unix:///nonexistent/docker.sock" in res.stderr
    assert "Fix:" in res.stderr


def test_gpus_all_without_nvidia_runtime_is_refused(docker_client, lib_image):
    from pufferlib.tank.containers import nvidia_runtime_available

    if nvidia_runtime_available(docker_client):
        pytest.skip("this engine has the NVIDIA runtime")
    res = puffertank("run", "--image", lib_image, "--gpus", "all", "--", "true")
    assert res.returncode == 1
    assert "no NVIDIA runtime" in res.stderr
