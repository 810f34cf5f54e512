"""A binding whose step costs DELAY_S seconds of sleep, loaded with `puffertank matrix --plugin`: the
baseline tests run it as it is (no delay), then a copy with the delay planted, which the comparison must
flag as a steps/s regression beyond the noise band."""

import time

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register

DELAY_S = 0.0


class Timed(gymnasium.Env):
    """Observations in [0, 1]; episodes of 16 steps; each step sleeps DELAY_S."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        if DELAY_S:
            time.sleep(DELAY_S)
        self.t += 1
        return np.full(2, 0.5, np.float32), 0.0, self.t >= 16, False, {}


def make_timed(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Timed(), buf=buf, seed=seed)


register(Binding(name="test/timed", make=make_timed, extra="", smoke=SmokeSpec(steps=512, seconds=120)))
