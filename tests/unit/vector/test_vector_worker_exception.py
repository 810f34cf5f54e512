"""An exception in a worker's env reaches the main process fast, with its traceback and env id."""

import time

import pytest
from _vector_envs import broken_creator, children, counter_failing_in_env_2, wait_until

import pufferlib.vector
from pufferlib.vector import WorkerError


def test_step_exception_names_env_and_carries_traceback():
    before = children()
    vecenv = pufferlib.vector.make(
        counter_failing_in_env_2, backend="multiprocessing", num_envs=4, num_workers=2, seed=0
    )
    vecenv.reset()
    vecenv.step([0, 0, 0, 0])
    vecenv.step([0, 0, 0, 0])
    start = time.monotonic()
    with pytest.raises(WorkerError) as info:
        vecenv.step([0, 0, 0, 0])  # tick 3: env 2 raises
    assert time.monotonic() - start < 5
    err = info.value
    assert err.env_id == 2 and err.worker == 1
    assert "counter 2 failed on purpose at tick 3" in str(err)
    assert "Traceback" in err.remote_traceback and "in step" in err.remote_traceback
    vecenv.close()  # already closed by the failure; must stay a no-op
    assert wait_until(lambda: children() <= before)


def test_creation_exception_surfaces_from_make():
    before = children()
    with pytest.raises(WorkerError, match=r"cannot build env with seed"):
        # env 0 is built in this process first (the driver), so break only the workers' envs
        pufferlib.vector.make(
            [broken_ok_first] + [broken_creator] * 3, backend="multiprocessing", num_envs=4, num_workers=2
        )
    assert wait_until(lambda: children() <= before)


def broken_ok_first(buf=None, seed=0):
    from _vector_envs import counter

    return counter(buf=buf, seed=seed) if buf is None else broken_creator(buf, seed)


def test_serial_exception_is_raised_as_is_with_a_note():
    vecenv = pufferlib.vector.make(counter_failing_in_env_2, backend="serial", num_envs=4, seed=0)
    vecenv.reset()
    vecenv.step([0] * 4)
    vecenv.step([0] * 4)
    with pytest.raises(RuntimeError, match="failed on purpose") as info:
        vecenv.step([0] * 4)
    assert any("env 2" in note for note in info.value.__notes__)
    vecenv.close()
