"""Deliberately broken bindings, loaded into the container with `puffertank matrix --plugin`.

test/raises: its env raises on reset, so every check from `reset` on fails or is skipped.
test/hangs:  its env never returns from step(), so the binding must time out and be killed.
Both prove that one bad binding fails only its own cells.
"""

import time

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register


class Raises(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        raise RuntimeError("deliberately broken env: reset() raises")


class Hangs(Raises):
    def reset(self, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        time.sleep(3600)  # a hang, as a deadlocked simulator would


def make_raises(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Raises(), buf=buf, seed=seed)


def make_hangs(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Hangs(), buf=buf, seed=seed)


register(Binding(name="test/raises", make=make_raises, extra="", smoke=SmokeSpec(steps=16, seconds=60)))
register(Binding(name="test/hangs", make=make_hangs, extra="", smoke=SmokeSpec(steps=16, seconds=20)))
