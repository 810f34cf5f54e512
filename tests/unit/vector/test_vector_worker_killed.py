"""A worker killed from outside is an error in the main process, never a hang."""

import os
import signal
import time

import pytest
from _vector_envs import children, counter, counter_exiting_in_env_3, wait_until

import pufferlib.vector
from pufferlib.vector import WorkerError, WorkerHung


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


@pytest.mark.parametrize("batch_size", [4, 2])
def test_a_stopped_worker_is_reported_hung(batch_size):
    """A worker that does not answer within worker_timeout (here SIGSTOPped) is WorkerHung, never a
    wait forever; closing kills it, stopped as it is."""
    before = children()
    vecenv = pufferlib.vector.make(
        counter, backend="multiprocessing", num_envs=4, num_workers=2, batch_size=batch_size, worker_timeout=1
    )
    vecenv.reset()
    victim = vecenv._procs[1].pid
    os.kill(victim, signal.SIGSTOP)
    message = rf"worker 1 \(envs 2-3, pid {victim}\) did not answer within 1 s \(worker_timeout\)"
    with pytest.raises(WorkerHung, match=message):
        while True:  # the live worker may go on answering; the stopped one ends it
            vecenv.step([0] * vecenv.agents_per_batch)
    assert wait_until(lambda: children() <= before)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "5", True])
def test_worker_timeout_must_be_a_positive_number(bad):
    with pytest.raises(
        pufferlib.APIUsageError, match=f"worker_timeout must be a positive number of seconds, got {bad!r}"
    ):
        pufferlib.vector.make(
            counter, backend="multiprocessing", num_envs=2, num_workers=2, worker_timeout=bad
        )


def test_worker_timeout_is_multiprocessing_only():
    with pytest.raises(pufferlib.APIUsageError, match=r"Unknown argument\(s\) worker_timeout .*with Serial"):
        pufferlib.vector.make(counter, backend="serial", num_envs=2, worker_timeout=5)


def _trainer_handler(signum: int, _frame) -> None:
    raise KeyboardInterrupt(f"the trainer's handler ran for {signal.Signals(signum).name}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_workers_leave_stop_signals_to_the_main_process(sig):
    """A stop signal sent to the whole process group (a scheduler, a dropped SSH session) neither kills
    a worker nor runs a handler it inherited from the main process: the main process decides."""
    previous = signal.signal(sig, _trainer_handler)  # fork copies it into the workers
    try:
        vecenv = pufferlib.vector.make(counter, backend="multiprocessing", num_envs=2, num_workers=2)
    finally:
        signal.signal(sig, previous)
    vecenv.reset()
    for p in vecenv._procs:
        os.kill(p.pid, sig)
    vecenv.step([0, 0])  # both still answer
    assert all(p.exitcode is None for p in vecenv._procs)
    vecenv.close()
