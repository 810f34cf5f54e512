"""`puffertank matrix` as a user runs it: bad input is explained, Ctrl-C leaves nothing behind."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from pufferlib.tank.matrix import LABEL

pytestmark = pytest.mark.docker

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]


def run(*args, timeout=120):
    return subprocess.run([*PUFFERTANK, *args], capture_output=True, text=True, timeout=timeout)


def test_no_matching_binding(lib_image):
    out = run("matrix", "--image", lib_image, "--env", "nosuchfamily/*")
    assert out.returncode == 1
    assert "no binding matches nosuchfamily/*" in out.stderr and "puffer envs" in out.stderr


def test_missing_image_names_the_fix(docker_client):
    out = run("matrix", "--image", "puffertank/lib:no-such-tag", "--variant", "cpu")
    assert out.returncode == 1
    assert "puffertank/lib:no-such-tag" in out.stderr and "puffertank build --variant cpu" in out.stderr


def test_plain_tcp_engines_are_refused():
    """tcp:// without TLS is root on that box for anyone who reaches the port: refused, with the ways out."""
    out = run("matrix", "--host", "tcp://127.0.0.1:9", "--variant", "cpu")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "refusing the plain-HTTP Docker engine tcp://127.0.0.1:9" in out.stderr
    assert "ssh://USER@HOST" in out.stderr and "--tlsverify" in out.stderr and "--insecure" in out.stderr
    # the same rule for DOCKER_HOST, with its own way to accept the risk
    env = {**os.environ, "DOCKER_HOST": "tcp://127.0.0.1:9"}
    refused = subprocess.run([*PUFFERTANK, "doctor", "--json"], capture_output=True, text=True, env=env)
    docker_check = json.loads(refused.stdout)["checks"][0]
    assert docker_check["status"] == "fail" and "refusing the plain-HTTP" in docker_check["detail"]
    # asked for: then it is only a connection that fails (nothing listens there)
    insecure = run("matrix", "--host", "tcp://127.0.0.1:9", "--insecure", "--variant", "cpu")
    assert (
        insecure.returncode == 1 and "cannot reach the Docker engine at tcp://127.0.0.1:9" in insecure.stderr
    )


def test_bad_jobs_and_plugin(tmp_path):
    assert "--jobs must be >= 1" in run("matrix", "--jobs", "0").stderr
    assert "not a .py file" in run("matrix", "--plugin", str(tmp_path / "nope.txt")).stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["INT", "TERM", "HUP"])
def test_an_interrupt_removes_the_containers(docker_client, lib_image, sig):
    """Ctrl-C, and SIGTERM/SIGHUP (a stopped CI job, a dropped SSH session) the same way."""
    proc = subprocess.Popen(
        [*PUFFERTANK, "matrix", "--image", lib_image, "--variant", "cpu", "--env", "ocean/*", "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not docker_client.containers.list(filters={"label": LABEL}):
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "no matrix container started within 120 s"
        time.sleep(0.2)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=90)
    assert proc.returncode == 128 + sig, out
    run_id = re.search(rf"interrupted; removed the run's containers \(label {LABEL}=(\w+)\)", out).group(1)
    assert docker_client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}) == []
