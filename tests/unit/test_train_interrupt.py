"""Ctrl-C during `puffer train` stops cleanly: final checkpoint saved, summary printed, exit 130."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.mark.slow
def test_sigint_saves_and_reports(tmp_path):
    cmd = [
        sys.executable, "-m", "pufferlib.cli", "train", "ocean/bandit", "--json",
        "--vec.backend", "multiprocessing", "--vec.num-envs", "4", "--vec.num-workers", "2",
        "--train.stop-when-solved", "false", "--train.total-timesteps", "100000000",
        "--train.checkpoint-dir", str(tmp_path), "--train.checkpoint-interval", "1",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not list(tmp_path.glob("*/model_*.pt")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stop_reason"] == "interrupted"
    assert Path(summary["checkpoint"]).parent.parent == tmp_path and Path(summary["checkpoint"]).exists()
