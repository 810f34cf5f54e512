"""Bindings with one realistic bug each, loaded with `puffertank matrix --plugin`: each turns exactly
one check red, which proves that check can fail.

test/bad-spaces  a native env that replaces its reward buffer with a (1, 1) array instead of
                 writing into the (1,) one it was given                     -> spaces fails
test/bad-step    observations leave the declared space after a few steps,
                 past emulation's start-up check                            -> step fails
test/bad-serial  every env in a process drives one shared simulator (class state, as a C library
                 with globals would): fine alone, corrupt with 2 envs in
                 one process                                                -> serial fails
test/bad-learn   rewards never depend on the actions, so no policy reaches
                 the solved score                                           -> learn fails
"""

import os

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, register

BOX = gymnasium.spaces.Box(0, 1, (2,), np.float32)


class Reallocates(PufferEnv):
    def __init__(self, buf=None, seed=0):
        self.single_observation_space = BOX
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self.num_agents = 1
        super().__init__(buf)
        self.rewards = np.zeros((1, 1), np.float32)  # the bug: a new buffer, of another shape

    def reset(self, seed=None):
        return self.observations, []

    def step(self, actions):
        return self.observations, self.rewards, self.terminals, self.truncations, []


class Simple(gymnasium.Env):
    """Observations in [0, 1]; episodes of 8 steps; reward 0 (nothing to learn)."""

    observation_space = BOX
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def observe(self) -> np.ndarray:
        return np.full(2, 0.5, np.float32)

    def step(self, action):
        self.t += 1
        return self.observe(), 0.0, self.t >= 8, False, {}


class LeavesItsSpace(Simple):
    def observe(self) -> np.ndarray:
        return np.full(2, 0.5 if self.t < 3 else 7.0, np.float32)  # the bug: outside Box(0, 1)


class SharedSimulator(Simple):
    users: dict[int, set[int]] = {}  # process id -> the envs stepping the one simulator of that process

    def observe(self) -> np.ndarray:
        users = self.users.setdefault(os.getpid(), set())
        users.add(id(self))
        if self.t < 2:  # past emulation's start-up check of the first step: the smoke check must see it
            return np.full(2, 0.5, np.float32)
        return np.full(2, float(len(users)), np.float32)  # 1.0 alone; 2.0 and up (outside the space) shared


def make_bad_spaces(buf=None, seed=0):
    return Reallocates(buf=buf, seed=seed)


def make_bad_step(buf=None, seed=0):
    return GymnasiumPufferEnv(env=LeavesItsSpace(), buf=buf, seed=seed)


def make_bad_serial(buf=None, seed=0):
    return GymnasiumPufferEnv(env=SharedSimulator(), buf=buf, seed=seed)


def make_bad_learn(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Simple(), buf=buf, seed=seed)


SPEC = SmokeSpec(steps=32, seconds=60)
register(Binding(name="test/bad-spaces", make=make_bad_spaces, extra="", smoke=SPEC))
register(Binding(name="test/bad-step", make=make_bad_step, extra="", smoke=SPEC))
register(Binding(name="test/bad-serial", make=make_bad_serial, extra="", smoke=SPEC))
# learn spends its step budget (4,096 agent steps) before it reports "not solved"
register(
    Binding(
        name="test/bad-learn",
        make=make_bad_learn,
        extra="",
        solved=1.0,
        smoke=SmokeSpec(steps=32, seconds=40, learn=True, learn_steps=4096),
    )
)
