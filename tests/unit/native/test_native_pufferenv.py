"""The native PufferEnv contract: spaces validated, buffers allocated or attached, async API."""

import gymnasium
import numpy as np
import pytest

import pufferlib
from pufferlib import APIUsageError, PufferEnv


class Counter(PufferEnv):
    """A native multi-agent env: each agent's observation counts its steps; resets itself."""

    def __init__(self, num_agents=3, buf=None):
        self.single_observation_space = gymnasium.spaces.Box(0, 100, (2,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self.num_agents = num_agents
        super().__init__(buf)

    def reset(self, seed=None):
        self.observations[:] = 0
        return self.observations, []

    def step(self, actions):
        self.observations[:, 0] += 1
        self.observations[:, 1] = actions
        self.rewards[:] = actions
        self.terminals[:] = False
        self.truncations[:] = False
        return self.observations, self.rewards, self.terminals, self.truncations, []


def test_buffers_are_allocated():
    env = Counter()
    assert env.observations.shape == (3, 2) and env.observations.dtype == np.float32
    assert env.actions.shape == (3,) and env.actions.dtype == np.int32
    assert env.rewards.shape == env.terminals.shape == env.truncations.shape == env.masks.shape == (3,)
    assert env.agents_per_batch == 3 and env.driver_env is env


def test_attaches_external_buffers_in_place():
    buf = pufferlib.allocate_buffers(
        3, gymnasium.spaces.Box(0, 100, (2,), np.float32), gymnasium.spaces.Discrete(2)
    )
    env = Counter(buf=buf)
    env.reset()
    env.step(np.array([1, 0, 1]))
    np.testing.assert_array_equal(buf.observations[:, 0], [1, 1, 1])
    np.testing.assert_array_equal(buf.rewards, [1, 0, 1])


def test_wrong_buffer_shape_is_rejected():
    buf = pufferlib.allocate_buffers(
        2, gymnasium.spaces.Box(0, 100, (2,), np.float32), gymnasium.spaces.Discrete(2)
    )
    with pytest.raises(APIUsageError, match=r"buffer 'observations' must be \(3, 2\) float32"):
        Counter(buf=buf)


def test_native_env_needs_a_box_observation():
    class Bad(PufferEnv):
        def __init__(self):
            self.single_observation_space = gymnasium.spaces.Discrete(3)
            self.single_action_space = gymnasium.spaces.Discrete(2)
            self.num_agents = 1
            super().__init__()

    with pytest.raises(APIUsageError, match="must be a Box"):
        Bad()


def test_missing_attributes_are_named():
    class Bare(PufferEnv):
        pass

    with pytest.raises(APIUsageError, match="single_observation_space"):
        Bare()


def test_async_api_on_a_single_env():
    env = Counter()
    env.async_reset()
    env.send(np.array([1, 1, 0]))
    obs, rewards, _, _, infos, ids, masks = env.recv()
    assert obs[:, 0].tolist() == [1, 1, 1] and rewards.tolist() == [1, 1, 0]
    assert ids.tolist() == [0, 1, 2] and masks.all() and infos == []
