"""Creators that return raw Gymnasium / PettingZoo envs, or PufferEnvs without `buf`, work everywhere."""

import numpy as np
import pytest
from _vector_envs import counter_without_buf, raw_counter, raw_multiagent

import pufferlib.vector

BACKENDS = [("serial", {}), ("multiprocessing", {"num_workers": 2})]


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_raw_gymnasium_env_is_wrapped(backend, kwargs):
    with pufferlib.vector.make(raw_counter, backend=backend, num_envs=2, seed=3, **kwargs) as vecenv:
        obs, _ = vecenv.reset()
        np.testing.assert_array_equal(obs[:, 0], [3, 4])
        obs, rewards, *_ = vecenv.step([2, 1])
        np.testing.assert_array_equal(rewards, [2, 1])


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_raw_pettingzoo_env_is_wrapped(backend, kwargs):
    with pufferlib.vector.make(raw_multiagent, backend=backend, num_envs=2, **kwargs) as vecenv:
        assert vecenv.num_agents == 4
        obs, _ = vecenv.reset()
        np.testing.assert_array_equal(obs[:, 0], [0, 1, 0, 1])


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_pufferenv_without_buf_is_copied_through(backend, kwargs):
    with pufferlib.vector.make(counter_without_buf, backend=backend, num_envs=2, seed=8, **kwargs) as vecenv:
        obs, _ = (
            vecenv.reset()
        )  # the first reset seeds env i with 8 + i even though the creator takes no seed
        np.testing.assert_array_equal(obs[:, 0], [8, 9])
        for _ in range(6):  # through an episode end (horizon 5) and its reset
            obs, rewards, _terminals, _truncations, _ = vecenv.step([3, 1])
        np.testing.assert_array_equal(obs[:, 1], [0, 0])
        obs, rewards, *_ = vecenv.step([3, 1])
        np.testing.assert_array_equal(rewards, [3, 1])
        np.testing.assert_array_equal(obs[:, 2], [3, 1])
