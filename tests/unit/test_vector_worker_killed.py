"""A worker killed from outside is an error in the main process, never a hang."""

import os
import signal
import time

import pytest
from _vector_envs import children, counter, counter_exiting_in_env_3, wait_until

import pufferlib.vector
from pufferlib.vector import WorkerError


@pytest.mark.parametrize("batch_size", [4, 2])
def test_killed_worker_raises(batch_size):
    before = children()
    vecenv = pufferlib.vector.make(
        counter, backend="multiprocessing", num_envs=4, num_workers=2, batch_size=batch_size, seed=0
    )
    _obs, _ = vecenv.reset()
    victim = vecenv._procs[1].pid
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=rf"worker 1 \(envs 2-3, pid {victim}\) died: killed by SIGKILL"):
        while time.monotonic() - start < 10:  # the live worker may go on answering for a while
            vecenv.step([0] * vecenv.agents_per_batch)
    assert time.monotonic() - start < 5
    assert wait_until(lambda: children() <= before)


def test_worker_exiting_abruptly_raises():
    before = children()
    vecenv = pufferlib.vector.make(
        counter_exiting_in_env_3, backend="multiprocessing", num_envs=4, num_workers=2
    )
    vecenv.reset()
    vecenv.step([0] * 4)
    with pytest.raises(WorkerError, match=r"worker 1 \(envs 2-3, pid \d+\) died: exit code 7"):
        vecenv.step([0] * 4)
    assert wait_until(lambda: children() <= before)
