"""Bindings that behave differently on a box whose Docker daemon sets `--dns MARK` (the second daemon of
test_matrix_hosts.py), loaded with `puffertank matrix --plugin`: what `--every-host` must flag.

test/host-step:    its step raises on that box: the step check passes on one host and fails on the other
test/host-frames:  seeded random frames (seeding "full"), whose low bit flips on that box: the same seed
                   draws different pixels there, as a driver that renders differently would
"""

from pathlib import Path

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register

MARK = "10.213.0.53"
FRAME = (16, 16, 3)


def on_the_marked_box() -> bool:
    try:
        return MARK in Path("/etc/resolv.conf").read_text()
    except OSError:
        return False


class HostDependent(gymnasium.Env):
    action_space = gymnasium.spaces.Discrete(2)
    observation_space = gymnasium.spaces.Box(0, 255, FRAME, np.uint8)

    def __init__(self, fail_step: bool) -> None:
        self.fail_step = fail_step and on_the_marked_box()
        self.flip = 0 if fail_step or not on_the_marked_box() else 1
        self.rng = np.random.default_rng(0)
        self.t = 0

    def frame(self) -> np.ndarray:
        return self.rng.integers(0, 256, FRAME, dtype=np.uint8) ^ np.uint8(self.flip)

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        self.t = 0
        return self.frame(), {}

    def step(self, action):
        if self.fail_step:
            raise RuntimeError(f"this box's resolv.conf names {MARK}")
        self.t += 1
        return self.frame(), 0.0, self.t >= 16, False, {}


def make(buf=None, seed=0, fail_step=False):
    env = GymnasiumPufferEnv(env=HostDependent(fail_step), buf=buf, seed=seed)
    env.render_backend = "numpy random frames"
    return env


def _binding(name: str, **kwargs) -> Binding:
    smoke = SmokeSpec(steps=64, seconds=90)
    return Binding(name=name, make=make, kwargs=kwargs, extra="", pixels=FRAME, smoke=smoke)


register(_binding("test/host-step", fail_step=True))
register(_binding("test/host-frames"))
