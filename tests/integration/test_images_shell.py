"""`puffertank shell` in a real pseudo-terminal: banner, prompt, aliases, exit code, container removed."""

from __future__ import annotations

import os
import pty
import select
import sys
import time

import pytest

pytestmark = pytest.mark.docker


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    out, deadline = b"", time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    return out


def test_shell_session(docker_client, lib_image, tmp_path):
    before = {
        c.id for c in docker_client.containers.list(all=True, filters={"label": "puffertank.command=shell"})
    }
    pid, fd = pty.fork()
    if pid == 0:  # the child: puffertank shell on the pty
        os.chdir(tmp_path)
        os.execv(sys.executable, [sys.executable, "-m", "pufferlib.tank.cli", "shell", "--image", lib_image])
    try:
        banner = read_until(fd, b"(puffertank:cpu)", 60)
        assert b"PufferTank (cpu)" in banner and b"GPU:" in banner, banner
        os.write(fd, b"echo answer-$((6*7)); alias ll; exit 7\r")
        out = read_until(fd, b"\x00never", 20)
        assert b"answer-42" in out and b"alias ll=" in out, out
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 7
    after = {
        c.id for c in docker_client.containers.list(all=True, filters={"label": "puffertank.command=shell"})
    }
    assert after == before


def test_shell_without_a_terminal_says_so(lib_image):
    import subprocess

    res = subprocess.run(
        [sys.executable, "-m", "pufferlib.tank.cli", "shell", "--image", lib_image],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1
    assert "needs a terminal" in res.stderr
