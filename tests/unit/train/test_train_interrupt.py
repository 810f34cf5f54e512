"""Stopping `puffer train` loses nothing: Ctrl-C, SIGTERM (docker stop, a stopped `puffertank run`)
and SIGHUP (a dropped SSH or Tailscale session) each save a final checkpoint, print the summary and
exit 128 + the signal number, as a shell reports a process ended by that signal; the run directory
gets its summary.json as well."""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _vector_envs import session


def _stopped(run_dir: Path, stop: Callable[[subprocess.Popen], None]) -> tuple[int, str, str]:
    """`puffer train` with 2 multiprocessing workers into run_dir, in its own session and process
    group, stopped by `stop(proc)` once its first checkpoint is saved: (exit code, stdout, stderr)."""
    cmd = [
        sys.executable, "-m", "pufferlib.cli", "train", "ocean/bandit", "--json",
        "--vec.backend", "multiprocessing", "--vec.num-envs", "4", "--vec.num-workers", "2",
        "--train.stop-when-solved", "false", "--train.total-timesteps", "100000000",
        "--train.run-dir", str(run_dir), "--train.checkpoint-interval", "1",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 180
        while not list(run_dir.glob("model_*.pt")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        stop(proc)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not session(proc.pid), "a worker outlived the trainer"
    return proc.returncode, out, err


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig, code",
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_stop_signal_saves_and_reports(tmp_path, sig, code):
    returncode, out, err = _stopped(tmp_path, lambda proc: proc.send_signal(sig))
    assert returncode == code, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stop_reason"] == "interrupted"
    assert summary["signal"] == (None if sig == signal.SIGINT else sig.name)
    saved = Path(summary["checkpoint"])
    assert saved.parent == tmp_path and saved.exists()
    assert summary["updates"] >= 1 and saved.name == f"model_{summary['updates']:06d}.pt"
    assert json.loads((tmp_path / "summary.json").read_text()) == summary  # the run directory says so too
    assert f"resume with: puffer train --resume {tmp_path}" in err


@pytest.mark.slow
def test_a_stop_signal_to_the_process_group_is_the_trainers(tmp_path):
    """`kill -TERM -PGID` (a scheduler, a dropped SSH session) reaches the workers too: they leave it to
    the trainer (no worker traceback), which saves, says how to resume and stops them all."""
    returncode, out, err = _stopped(tmp_path, lambda proc: os.killpg(proc.pid, signal.SIGTERM))
    assert returncode == 143, err
    assert "Traceback" not in err and "Interrupted" not in err, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["signal"] == "SIGTERM" and Path(summary["checkpoint"]).is_file()
    assert f"stopped by SIGTERM; resume with: puffer train --resume {tmp_path}" in err
