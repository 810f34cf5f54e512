"""pl3_driver.py's train mode ends when PufferLib 3.0's trainer raises, though a thread the trainer
started (its Utilization monitor, no daemon) still runs. Before, a peer config that fails (its snake
policy under `rnn_name = None` has no forward_eval) held the bench for the driver's whole timeout,
15 minutes a run. CI has no peer: the trainer here is a module with the names the driver uses, written
to tmp_path; the driver is the real file, run as the bench runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pufferlib.bench import pufferlib3

TRAINER = """
import threading
import time

load_config = load_policy = None


class NoLogger:
    pass


class PuffeRL:
    def print_dashboard(self):
        pass


def main():
    threading.Thread(target=time.sleep, args=(600,)).start()  # no daemon, as its Utilization thread
    raise AttributeError("'Snake' object has no attribute 'forward_eval'")
"""


def test_a_trainer_that_raises_ends_the_driver_with_its_error(tmp_path):
    package = tmp_path / "pufferlib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "pufferl.py").write_text(TRAINER)
    spec = {"env": "puffer_snake", "seconds": 5, "log": str(tmp_path / "log.jsonl")}
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(pufferlib3.DRIVER), "train", json.dumps(spec)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # the thread sleeps 600 s: a driver that waits for it fails here
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "AttributeError: 'Snake' object has no attribute 'forward_eval'"
    ), done.stderr
