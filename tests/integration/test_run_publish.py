"""`puffertank run -p`: a server inside the container (as `tensorboard --logdir runs --bind_all` would be)
is reached from the host at the published loopback port, and the container is removed afterwards."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.docker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_published_port_reaches_the_host(docker_client, lib_image, tmp_path):
    (tmp_path / "index.html").write_text("tensorboard stand-in\n")
    port = free_port()
    cmd = [sys.executable, "-m", "pufferlib.tank.cli", "run", "--image", lib_image, "--gpus", "none"]
    cmd += ["-p", f"{port}:6006", "--", "python", "-m", "http.server", "6006", "--bind", "0.0.0.0"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        body, deadline = None, time.monotonic() + 120
        while body is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as reply:
                    body = reply.read().decode()
            except OSError:
                time.sleep(0.5)
        assert body == "tensorboard stand-in\n", proc.poll()
        containers = docker_client.containers.list(filters={"label": "puffertank.command=run"})
        published = [c.ports.get("6006/tcp") for c in containers]
        assert [{"HostIp": "127.0.0.1", "HostPort": str(port)}] in published  # loopback only, by default
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    running = docker_client.containers.list(all=True, filters={"label": "puffertank.command=run"})
    assert not [c for c in running if c.ports.get("6006/tcp")], "the container was not removed"


def test_publish_with_no_network_is_refused(lib_image, tmp_path):
    cmd = [sys.executable, "-m", "pufferlib.tank.cli", "run", "--image", lib_image, "--network", "none"]
    proc = subprocess.run([*cmd, "-p", "6006", "--", "true"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "--publish with --network none" in proc.stderr
