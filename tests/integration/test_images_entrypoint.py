"""The entrypoint: a banner (versions, GPU visibility) for interactive sessions or on request, silent for
scripts, offline (no network needed), and the command's exit code passed through tini."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.docker


def test_banner_on_request_offline(lib_container):
    result = lib_container.run_and_wait(
        ["true"], environment={"PUFFERTANK_BANNER": "1"}, network_mode="none", timeout=60
    )
    banner = result.stderr
    assert "PufferTank (cpu) | Python 3.11" in banner
    assert "torch 2." in banner and "+cpu (CUDA none)" in banner
    assert "pufferlib " in banner and "not installed" not in banner
    assert "GPU: none visible (CPU only)" in banner
    assert result.stdout == ""


def test_scripts_get_no_banner(lib_container):
    result = lib_container.run_and_wait(["python", "-c", "print('only this')"])
    assert (result.stdout, result.stderr) == ("only this\n", "")


def test_exit_code_and_signals_pass_through_tini(lib_container):
    assert lib_container.run_and_wait(["sh", "-c", "exit 42"], expect=None).exit_code == 42
    running = lib_container.run_detached(["sh", "-c", "echo ready; exec sleep 300"])
    deadline = time.monotonic() + 60
    while b"ready" not in running.logs() and time.monotonic() < deadline:
        time.sleep(0.1)  # stop only once tini runs the command (before that, PID 1 ignores SIGTERM)
    running.stop(timeout=10)  # SIGTERM reaches sleep through tini: a fast exit by the signal, not SIGKILL
    assert running.wait(timeout=30)["StatusCode"] == 143
