"""Bindings with pixel observations for the `render` check, loaded with `puffertank matrix --plugin`.

test/frames:       random 16x16x3 frames, as declared: render passes and names its renderer.
test/blank-frames: frames of one flat value (a renderer that draws nothing): render fails.
test/wrong-frame:  declares 16x16x3 frames but observes 16x16x1: render fails.
test/dict-frames:  a Dict observation (frame + a number, as ViZDoom's screen and game variables): render
                   finds the frame field and passes.
test/drawn, test/blank-drawn, test/still-drawn: no pixel observations, but render() draws (`draws`, as
                   PufferLib 3.0's envs do): frames that change pass; one flat colour, or one frame whatever
                   the env does, fail.
"""

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register

FRAME = (16, 16, 3)


class Frames(gymnasium.Env):
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, shape=FRAME, blank=False, dict_obs=False):
        self.frame_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        self.observation_space = self.frame_space
        if dict_obs:
            health = gymnasium.spaces.Box(0, 100, (1,), np.float32)
            self.observation_space = gymnasium.spaces.Dict({"screen": self.frame_space, "health": health})
        self.blank = blank
        self.rng = np.random.default_rng(0)

    def frame(self):
        if self.blank:
            frame = np.full(self.frame_space.shape, 7, np.uint8)
        else:
            frame = self.rng.integers(0, 256, self.frame_space.shape, dtype=np.uint8)
        if isinstance(self.observation_space, gymnasium.spaces.Dict):
            return {"screen": frame, "health": np.array([50.0], np.float32)}
        return frame

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        return self.frame(), {}

    def step(self, action):
        return self.frame(), 0.0, False, False, {}


def make(buf=None, seed=0, shape=FRAME, blank=False, dict_obs=False):
    env = GymnasiumPufferEnv(env=Frames(shape, blank, dict_obs), buf=buf, seed=seed)
    env.render_backend = "numpy random frames"
    return env


def _binding(name, **kwargs):
    return Binding(
        name=name, make=make, kwargs=kwargs, extra="", pixels=FRAME, smoke=SmokeSpec(steps=16, seconds=60)
    )


register(_binding("test/frames"))
register(_binding("test/blank-frames", blank=True))
register(_binding("test/wrong-frame", shape=(16, 16, 1)))
register(_binding("test/dict-frames", dict_obs=True))


class Drawn(gymnasium.Env):
    """Observes 4 numbers; render() (render_mode "rgb_array" only) draws a 12x20 image: `look` "random",
    "blank" (one colour) or "still" (the same picture every step)."""

    action_space = gymnasium.spaces.Discrete(2)
    observation_space = gymnasium.spaces.Box(0, 1, (4,), np.float32)

    def __init__(self, render_mode=None, look="random"):
        self.render_mode, self.look = render_mode, look
        self.rng = np.random.default_rng(0)

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}

    def render(self):
        if self.render_mode != "rgb_array":
            raise RuntimeError("render() draws with render_mode 'rgb_array' only")
        if self.look == "blank":
            return np.full((12, 20, 3), 9, np.uint8)
        rng = np.random.default_rng(0) if self.look == "still" else self.rng
        return rng.integers(0, 256, (12, 20, 3), dtype=np.uint8)


def make_drawn(buf=None, seed=0, render_mode=None, look="random"):
    return GymnasiumPufferEnv(env=Drawn(render_mode, look), buf=buf, seed=seed)


for _name, _look in (("test/drawn", "random"), ("test/blank-drawn", "blank"), ("test/still-drawn", "still")):
    register(
        Binding(
            name=_name,
            make=make_drawn,
            kwargs={"look": _look},
            extra="",
            draws=True,
            smoke=SmokeSpec(steps=16, seconds=60),
        )
    )
