"""The vector API contract: call order, shapes, spaces, context manager, idempotent close, bad actions."""

import functools

import numpy as np
import pytest
from _vector_envs import counter

import pufferlib.vector
from pufferlib import APIUsageError
from pufferlib.environments import ocean

BACKENDS = [("serial", {}), ("multiprocessing", {"num_workers": 2})]


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_call_order_is_enforced(backend, kwargs):
    vecenv = pufferlib.vector.make(counter, backend=backend, num_envs=2, **kwargs)
    with pytest.raises(APIUsageError, match=r"before reset\(\)"):
        vecenv.send([0, 0])
    with pytest.raises(APIUsageError, match=r"before reset\(\)"):
        vecenv.recv()
    vecenv.async_reset()
    with pytest.raises(APIUsageError, match=r"send\(\) twice without recv\(\)"):
        vecenv.send([0, 0])
    vecenv.recv()
    with pytest.raises(APIUsageError, match=r"recv\(\) twice without send\(\)"):
        vecenv.recv()
    vecenv.send([0, 0])
    vecenv.reset()  # a reset while a batch is in flight waits for it, then resets
    vecenv.close()
    vecenv.close()
    with pytest.raises(APIUsageError, match=r"after close\(\)"):
        vecenv.step([0, 0])


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_shapes_spaces_and_passthrough(backend, kwargs):
    creator = functools.partial(ocean.make_env, "spaces")
    with pufferlib.vector.make(creator, backend=backend, num_envs=4, **kwargs) as vecenv:
        driver = vecenv.driver_env
        assert vecenv.single_observation_space == driver.single_observation_space
        assert vecenv.single_action_space == driver.single_action_space
        assert vecenv.emulated is driver.emulated and vecenv.emulated["observation_dtype"] is not None
        assert vecenv.num_envs == 4 and vecenv.num_agents == 4 and vecenv.agents_per_batch == 4
        obs, infos = vecenv.reset()
        assert obs.shape == (4, *vecenv.single_observation_space.shape)
        assert obs.dtype == vecenv.single_observation_space.dtype and infos == []
        assert vecenv.observation_space.contains(obs)
        obs, rewards, terminals, truncations, infos = vecenv.step(vecenv.action_space.sample())
        assert rewards.dtype == np.float32 and terminals.dtype == bool and truncations.dtype == bool
        assert len(infos) == 4 and all("episode_return" in i for i in infos)  # one-step episodes


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_bad_actions(backend, kwargs):
    with pufferlib.vector.make(counter, backend=backend, num_envs=2, **kwargs) as vecenv:
        vecenv.reset()
        with pytest.raises(APIUsageError, match=r"actions must have shape \(2,\).*got \(3,\)"):
            vecenv.step([0, 1, 2])
        with pytest.raises(APIUsageError, match=r"discrete actions must be integers"):
            vecenv.step([0.5, 1])
        vecenv.step(np.array([[1], [2]], dtype=np.int64))  # same size: reshaped
