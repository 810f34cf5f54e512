"""Bindings whose reward no policy can learn, for the matrix's `learn` check (`puffertank matrix --plugin`,
or PUFFERLIB_PLUGINS=unlearnable with this folder on PYTHONPATH).

test/unlearnable:      one-step episodes rewarded +1 or -1 by a coin the action cannot move (the mean
                       return stays near 0, solved at 0.9): the learn check spends its step budget
                       (4,096 agent steps) and fails red.
test/unlearnable-slow: the same with a step budget no box spends in time, so the learn check's
                       wall-time hang guard stops it first: `timeout`, not `fail`.
"""

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register


class Coin(gymnasium.Env):
    """A constant observation; each step ends the episode with a reward of +1 or -1 at random."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.full(2, 0.5, np.float32), {}

    def step(self, action):
        reward = float(self.np_random.choice((-1.0, 1.0)))
        return np.full(2, 0.5, np.float32), reward, True, False, {}


def make_coin(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Coin(), buf=buf, seed=seed)


for name, steps, seconds in (("test/unlearnable", 4096, 120.0), ("test/unlearnable-slow", 10**10, 40.0)):
    register(
        Binding(
            name=name,
            make=make_coin,
            extra="",
            solved=0.9,
            smoke=SmokeSpec(steps=64, seconds=seconds, learn=True, learn_steps=steps),
        )
    )
