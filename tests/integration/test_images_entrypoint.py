"""The entrypoint: a banner (versions, GPU visibility) for interactive sessions or on request, silent for
scripts, offline (no network needed), and the command's exit code passed through tini."""

from __future__ import annotations

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
    running = lib_container.run_detached(["sleep", "300"])
    running.stop(timeout=10)  # SIGTERM reaches sleep through tini (PID 1 would ignore it): fast exit
    assert running.wait(timeout=30)["StatusCode"] == 143
