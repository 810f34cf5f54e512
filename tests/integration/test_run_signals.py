"""SIGTERM and SIGHUP (a stopped service, an SSH or Tailscale disconnect) are handled like Ctrl-C by
`puffertank run` and `puffertank shell`: the signal is passed on to the container's command, which gets
--stop-timeout seconds to finish (so `puffer train` can save), and the container is always removed.

Real processes, real signals: each test starts `puffertank` and signals it like the system would.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]


def ours(client, token: str) -> list:
    """This test's containers (puffertank run/shell with PT_SIGNAL_TEST=token), running or not."""
    found = []
    for container in client.containers.list(all=True, filters={"label": "puffertank.managed=1"}):
        if f"PT_SIGNAL_TEST={token}" in (container.attrs["Config"].get("Env") or []):
            found.append(container)
    return found


def start_run(lib_image: str, token: str, workspace: Path, script: str, *options: str) -> subprocess.Popen:
    argv = [*PUFFERTANK, "run", "--image", lib_image, "--gpus", "none", "-e", f"PT_SIGNAL_TEST={token}"]
    return subprocess.Popen(
        [*argv, *options, "--", "sh", "-c", script],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_line(proc: subprocess.Popen, line: str, timeout: float = 120) -> None:
    """Wait until the command printed `line` (then tini runs it and a signal reaches it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            got = proc.stdout.readline()
            if got.strip() == line:
                return
            assert got, f"puffertank ended before {line!r}: {proc.stderr.read()}"
    pytest.fail(f"no {line!r} from the container within {timeout} s")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_run_removes_its_container(docker_client, lib_image, tmp_path, sig):
    token = uuid.uuid4().hex
    proc = start_run(lib_image, token, tmp_path, "echo ready; exec sleep 300")
    try:
        wait_for_line(proc, "ready")
        assert [c.status for c in ours(docker_client, token)] == ["running"]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err  # sleep ended by the same signal, passed on
    assert ours(docker_client, token) == [], "the container outlived puffertank run"


SAVE_ON_SIGNAL = (
    "trap 'echo saved > /workspace/saved; exit 42' {sig}; echo ready; while :; do sleep 0.1; done"
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["TERM", "HUP", "INT"])
def test_run_passes_the_signal_on_so_the_command_can_save(docker_client, lib_image, tmp_path, sig):
    """What `puffer train` needs: the signal reaches it, and it may finish its own way (save, then exit)."""
    token = uuid.uuid4().hex
    name = signal.Signals(sig).name.removeprefix("SIG")
    proc = start_run(lib_image, token, tmp_path, SAVE_ON_SIGNAL.format(sig=name))
    try:
        wait_for_line(proc, "ready")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (tmp_path / "saved").read_text() == "saved\n", err
    assert proc.returncode == 42, err  # the command's own exit code: it finished, it was not killed
    assert f"SIG{name}: passing it to the container's command" in err
    assert ours(docker_client, token) == []


def test_a_command_that_ignores_the_signal_is_killed_after_stop_timeout(docker_client, lib_image, tmp_path):
    token = uuid.uuid4().hex
    script = "trap '' TERM; echo ready; while :; do sleep 0.1; done"
    proc = start_run(lib_image, token, tmp_path, script, "--stop-timeout", "2")
    try:
        wait_for_line(proc, "ready")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "did not finish within 2 s" in err
    assert ours(docker_client, token) == []


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    out, deadline = b"", time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGHUP, 129), (signal.SIGTERM, 143)],  # bash exits on HUP; an interactive bash ignores TERM
    ids=["HUP", "TERM"],
)
def test_shell_removes_its_container(docker_client, lib_image, tmp_path, sig, code):
    token = uuid.uuid4().hex
    pid, fd = pty.fork()
    if pid == 0:  # the child: puffertank shell on the pty
        os.chdir(tmp_path)
        argv = ["shell", "--image", lib_image, "-e", f"PT_SIGNAL_TEST={token}", "--stop-timeout", "2"]
        os.execv(sys.executable, [*PUFFERTANK, *argv])
    try:
        prompt = read_until(fd, b"(puffertank:cpu)", 90)
        assert b"(puffertank:cpu)" in prompt, prompt
        assert [c.status for c in ours(docker_client, token)] == ["running"]
        os.kill(pid, sig)
        read_until(fd, b"\x00never", 30)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == code
    assert ours(docker_client, token) == [], "the container outlived puffertank shell"
