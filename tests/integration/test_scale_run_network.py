"""`puffertank run` as one node of a multi-node job: the host's network and name, and the interface
torch.distributed talks over (NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME, set together)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]
SHOW = 'hostname; echo "nccl=$NCCL_SOCKET_IFNAME gloo=$GLOO_SOCKET_IFNAME"; cat /sys/class/net/lo/operstate'


def puffertank(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PUFFERTANK, *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_host_network_keeps_the_hosts_name_and_sets_both_interfaces(lib_image, tmp_path):
    iface = sorted(p.name for p in Path("/sys/class/net").iterdir())[0]  # one this host has (lo, eth0...)
    args = ["run", "--image", lib_image, "--gpus", "none", "--network", "host", "--socket-ifname", iface]
    done = puffertank(*args, "--", "sh", "-c", SHOW, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    name, variables, _ = done.stdout.splitlines()
    assert name == socket.gethostname()  # what torchrun and Ray advertise to the other nodes
    assert variables == f"nccl={iface} gloo={iface}"


def test_docker_network_keeps_the_tank_name(lib_image, tmp_path):
    done = puffertank("run", "--image", lib_image, "--gpus", "none", "--", "hostname", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "puffertank\n"), done.stderr


@pytest.mark.parametrize(
    ("extra", "message", "code"),
    [
        (["--socket-ifname", "lo"], "needs --network host", 2),
        (["--network", "host", "--socket-ifname", "tailscale9"], "no such network interface on this host", 1),
    ],
)
def test_an_interface_the_container_cannot_have_is_refused(lib_image, tmp_path, extra, message, code):
    done = puffertank("run", "--image", lib_image, "--gpus", "none", *extra, "--", "true", cwd=tmp_path)
    assert done.returncode == code and message in done.stderr, done.stderr
    assert "Fix:" in done.stderr
