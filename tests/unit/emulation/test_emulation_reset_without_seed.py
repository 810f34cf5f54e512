"""An env whose reset() takes no seed is reset without one and seeded through env.seed (bug 4)."""

import gymnasium
import numpy as np

import pufferlib.vector
from pufferlib.emulation import GymnasiumPufferEnv


class OldStyle(gymnasium.Env):
    """reset() without seed/options; seeding through seed(), like many hand-written envs."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        self.rng = np.random.default_rng()
        self.seeds = []

    def seed(self, seed):
        self.seeds.append(seed)
        self.rng = np.random.default_rng(seed)

    def reset(self):
        return self.rng.random(2, dtype=np.float32), {}

    def step(self, action):
        return self.rng.random(2, dtype=np.float32), 0.0, False, False, {}


def test_reset_without_seed_parameter():
    env = GymnasiumPufferEnv(env=OldStyle(), seed=5)
    first = env.reset()[0].copy()  # the constructor's seed goes through env.seed()
    assert env.env.seeds == [5]
    env.step(np.array([1]))
    again = env.reset(seed=5)[0].copy()
    np.testing.assert_array_equal(first, again)
    env.reset()  # no seed: the env's generator continues, seed() is not called
    assert env.env.seeds == [5, 5]
    assert env.env.action_space.np_random is not None


def test_vector_env_of_old_style_envs():
    with pufferlib.vector.make(OldStyle, backend=pufferlib.vector.Serial, num_envs=2, seed=3) as vecenv:
        obs, _ = vecenv.reset()
        assert [env.env.seeds for env in vecenv.envs.envs] == [[3], [4]]
        assert not np.array_equal(obs[0], obs[1])
