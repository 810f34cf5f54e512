"""Bindings with pixel observations for the `render` check, loaded with `puffertank matrix --plugin`.

test/frames:       random 16x16x3 frames, as declared: render passes and names its renderer.
test/blank-frames: frames of one flat value (a renderer that draws nothing): render fails.
test/wrong-frame:  declares 16x16x3 frames but observes 16x16x1: render fails.
"""

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register

FRAME = (16, 16, 3)


class Frames(gymnasium.Env):
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, shape=FRAME, blank=False):
        self.observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        self.blank = blank
        self.rng = np.random.default_rng(0)

    def frame(self):
        if self.blank:
            return np.full(self.observation_space.shape, 7, np.uint8)
        return self.rng.integers(0, 256, self.observation_space.shape, dtype=np.uint8)

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        return self.frame(), {}

    def step(self, action):
        return self.frame(), 0.0, False, False, {}


def make(buf=None, seed=0, shape=FRAME, blank=False):
    env = GymnasiumPufferEnv(env=Frames(shape, blank), buf=buf, seed=seed)
    env.render_backend = "numpy random frames"
    return env


def _binding(name, **kwargs):
    return Binding(
        name=name, make=make, kwargs=kwargs, extra="", pixels=FRAME, smoke=SmokeSpec(steps=16, seconds=60)
    )


register(_binding("test/frames"))
register(_binding("test/blank-frames", blank=True))
register(_binding("test/wrong-frame", shape=(16, 16, 1)))
