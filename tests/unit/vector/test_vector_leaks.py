"""close(), interpreter exit, Ctrl-C and a killed main process leave no workers and no /dev/shm entries.

Each case runs a real Python process that prints its workers' pids, then checks /proc and /dev/shm.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _vector_envs import alive, children, counter, shm_entries, wait_until

import pufferlib.vector

UNIT = Path(__file__).parents[1]  # tests/unit: _vector_envs.py

SCRIPT = """
import json, multiprocessing, sys, time
sys.path.insert(0, {here!r})
if __name__ == "__main__":
    multiprocessing.set_start_method({method!r})
    import pufferlib.vector
    from _vector_envs import counter
    vecenv = pufferlib.vector.make(counter, backend="multiprocessing", num_envs=4, num_workers=2)
    vecenv.reset()
    print(json.dumps([p.pid for p in vecenv._procs]), flush=True)
    sys.stdin.readline()  # the test has seen the workers alive
    mode = {mode!r}
    if mode == "exit":
        sys.exit(0)  # no close(): the interpreter's exit must clean up
    while True:  # until a signal arrives
        vecenv.step([0, 0, 0, 0])
"""


def run(mode: str, method: str, sig: int | None = None):
    code = textwrap.dedent(SCRIPT.format(here=str(UNIT), method=method, mode=mode))
    shm_before = shm_entries()
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = json.loads(proc.stdout.readline())
    assert all(alive(pid) for pid in pids)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    time_to_step = 0.2 if sig is not None else 0.0
    time.sleep(time_to_step)  # let a looping script get into its stepping loop
    if sig is not None:
        proc.send_signal(sig)
    proc.wait(timeout=20)
    stderr = proc.stderr.read()
    assert wait_until(lambda: not any(alive(pid) for pid in pids), timeout=10), (
        f"workers left: {pids}\n{stderr}"
    )
    assert wait_until(lambda: shm_entries() <= shm_before), f"/dev/shm: {shm_entries() - shm_before}"
    return proc.returncode, stderr


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_interpreter_exit_without_close(method):
    code, stderr = run("exit", method)
    assert code == 0, stderr


def test_ctrl_c():
    code, stderr = run("loop", "fork", signal.SIGINT)
    assert "KeyboardInterrupt" in stderr and code != 0


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_main_killed(method):
    code, _ = run("loop", method, signal.SIGKILL)
    assert code == -signal.SIGKILL


def test_close_leaves_nothing():
    before, shm_before = children(), shm_entries()
    fds_before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        vecenv = pufferlib.vector.make(counter, backend="multiprocessing", num_envs=4, num_workers=2)
        vecenv.reset()
        pids = [p.pid for p in vecenv._procs]
        assert children() - before == set(pids)
        vecenv.close()
        vecenv.close()  # idempotent
        assert not any(alive(pid) for pid in pids)
    assert children() <= before
    assert wait_until(lambda: shm_entries() <= shm_before)
    assert len(os.listdir("/proc/self/fd")) <= fds_before + 2  # pipes and shared memory are released


def test_garbage_collected_vecenv_stops_its_workers():
    import gc

    vecenv = pufferlib.vector.make(counter, backend="multiprocessing", num_envs=2, num_workers=2)
    pids = [p.pid for p in vecenv._procs]
    del vecenv
    gc.collect()
    assert wait_until(lambda: not any(alive(pid) for pid in pids))
