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
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig, code",
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_stop_signal_saves_and_reports(tmp_path, sig, code):
    cmd = [
        sys.executable, "-m", "pufferlib.cli", "train", "ocean/bandit", "--json",
        "--vec.backend", "multiprocessing", "--vec.num-envs", "4", "--vec.num-workers", "2",
        "--train.stop-when-solved", "false", "--train.total-timesteps", "100000000",
        "--train.run-dir", str(tmp_path), "--train.checkpoint-interval", "1",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not list(tmp_path.glob("model_*.pt")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stop_reason"] == "interrupted"
    assert summary["signal"] == (None if sig == signal.SIGINT else sig.name)
    saved = Path(summary["checkpoint"])
    assert saved.parent == tmp_path and saved.exists()
    assert summary["updates"] >= 1 and saved.name == f"model_{summary['updates']:06d}.pt"
    assert json.loads((tmp_path / "summary.json").read_text()) == summary  # the run directory says so too


@pytest.mark.slow
def test_a_stop_signal_to_the_process_group_is_the_trainers(tmp_path):
    """`kill -TERM -PGID` (a scheduler, a dropped SSH session) reaches the workers too: they leave it to
    the trainer (no worker traceback), which saves, says how to resume and stops them all."""
    cmd = [
        sys.executable, "-m", "pufferlib.cli", "train", "ocean/bandit", "--json",
        "--vec.backend", "multiprocessing", "--vec.num-envs", "4", "--vec.num-workers", "2",
        "--train.stop-when-solved", "false", "--train.total-timesteps", "100000000",
        "--train.run-dir", str(tmp_path), "--train.checkpoint-interval", "1",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 180
        while not list(tmp_path.glob("model_*.pt")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "Interrupted" not in err, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["signal"] == "SIGTERM" and Path(summary["checkpoint"]).is_file()
    assert f"stopped by SIGTERM; resume with: puffer train --resume {tmp_path}" in err
    assert not _session(proc.pid), "a worker outlived the trainer"


def _session(sid: int) -> list[int]:
    """The live processes of session `sid` (the trainer started with start_new_session, and its workers)."""
    alive = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # the session id; not a zombie
            alive.append(int(entry))
    return alive
