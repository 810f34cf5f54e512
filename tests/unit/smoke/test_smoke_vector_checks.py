"""The smoke's serial and multiprocessing checks check something: observations in their space, and
the same trace from both backends for the same seed and actions."""

import os

import gymnasium
import numpy as np
import pytest

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments import registry
from pufferlib.environments.registry import Binding, register
from pufferlib.smoke import Smoke

VECTOR = ("import", "make", "spaces", "reset", "step", "serial", "multiprocessing")


class SharesState(gymnasium.Env):
    """Envs of one process share a counter (as a C library with globals would): observations stay in
    the space, but 2 envs in one process (Serial) see other values than 1 env per process."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)
    users: dict[int, set[int]] = {}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        users = self.users.setdefault(os.getpid(), set())
        users.add(id(self))
        return np.full(2, 0.5 * min(len(users), 2), np.float32), 0.0, self.t >= 8, False, {}


def make_shares_state(buf=None, seed=0):
    return GymnasiumPufferEnv(env=SharesState(), buf=buf, seed=seed)


@pytest.fixture
def shares_state():
    """Registered only for the test: other tests iterate over every registered binding."""
    binding = register(Binding(name="test/unit-shares-state", make=make_shares_state, extra=""))
    yield binding.name
    registry._REGISTRY.pop(binding.name)


def results(name):
    return {r.check: r for r in Smoke(name, steps=32).run(VECTOR)}


def test_a_reproducible_env_gives_the_same_trace_in_both_backends():
    got = results("ocean/squared")
    assert got["serial"].status == "pass" and "observations in their space" in got["serial"].detail
    assert got["multiprocessing"].status == "pass", got["multiprocessing"].detail
    assert "the same trace as Serial" in got["multiprocessing"].detail


def test_backends_that_disagree_fail_the_multiprocessing_check(shares_state):
    got = results(shares_state)
    assert got["serial"].status == "pass", got["serial"].detail
    assert got["multiprocessing"].status == "fail"
    assert (
        "Multiprocessing and Serial differ from step 1 on, with the same seed (0)"
        in got["multiprocessing"].detail
    )
