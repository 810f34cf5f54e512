"""A scalar observation space, Box(shape=()), goes through the emulation and a vector backend.

Each agent's buffer row is then a 0-d array: the per-row views must stay writable arrays, not the
numpy scalars that iterating a 1-D buffer yields.
"""

import gymnasium
import numpy as np
import pytest

import pufferlib.vector
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*Casting input x to numpy array:UserWarning"),  # np.float32 obs
    pytest.mark.filterwarnings("ignore:Scalar. observation is float64:UserWarning"),
]

SCALAR = gymnasium.spaces.Box(-1, 1, (), np.float32)


class Scalar(gymnasium.Env):
    """Observes 0.5 at reset, then the last action / 4."""

    observation_space = SCALAR
    action_space = gymnasium.spaces.Discrete(3)

    def reset(self, seed=None, options=None):
        return np.float32(0.5), {}

    def step(self, action):
        return np.float32(action / 4), 1.0, False, False, {}


def test_reset_and_step_write_the_scalar():
    env = GymnasiumPufferEnv(env=Scalar())
    obs, _ = env.reset(seed=1)
    assert obs.shape == (1,) and obs[0] == np.float32(0.5)
    for action in (2, 1, 2):  # the fast path is chosen after the first checked step
        obs, *_ = env.step(np.array([action]))
        assert obs[0] == np.float32(action / 4)
    env.close()


def test_python_float_and_0d_array_observations():
    env = GymnasiumPufferEnv(env=Scalar())
    env.reset(seed=1)
    env.env.step = lambda a: (np.array(a / 4, np.float64), 0.0, False, False, {})  # 0-d float64: cast
    assert env.step(np.array([1]))[0][0] == np.float32(0.25)
    env.env.step = lambda a: (a / 4, 0.0, False, False, {})  # a Python float
    assert env.step(np.array([2]))[0][0] == np.float32(0.5)
    env.close()


def test_serial_vector_env_of_scalar_observations():
    vecenv = pufferlib.vector.make(
        lambda **kw: GymnasiumPufferEnv(env=Scalar(), **kw), num_envs=2, backend="Serial"
    )
    obs, _ = vecenv.reset(seed=3)
    assert obs.shape == (2,) and (obs == np.float32(0.5)).all()
    obs, *_ = vecenv.step(np.array([2, 1]))
    assert obs.tolist() == [0.5, 0.25]
    vecenv.close()


class ScalarAgents:
    """Two agents observing a scalar each; agent i observes i / 4 + the action / 8."""

    metadata: dict = {}
    possible_agents = ["a", "b"]

    def __init__(self):
        self.agents = []

    def observation_space(self, agent):
        return SCALAR

    def action_space(self, agent):
        return gymnasium.spaces.Discrete(3)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        return {a: np.float32(i / 4) for i, a in enumerate(self.agents)}, {a: {} for a in self.agents}

    def step(self, actions):
        obs = {a: np.float32(i / 4 + actions[a] / 8) for i, a in enumerate(self.agents)}
        zero = {a: 0.0 for a in self.agents}
        false = {a: False for a in self.agents}
        return obs, zero, false, dict(false), {a: {} for a in self.agents}

    def close(self):
        pass


@pytest.mark.parametrize("agents", [["a", "b"], ["b"]])
def test_pettingzoo_scalar_observations(agents):
    env = PettingZooPufferEnv(env=ScalarAgents())
    obs, _ = env.reset(seed=0)
    assert obs.tolist() == [0.0, 0.25]
    env.env.step = lambda actions: (  # only `agents` report this step
        {a: np.float32(0.75) for a in agents},
        {a: 0.0 for a in agents},
        {a: False for a in agents},
        {a: False for a in agents},
        {a: {} for a in agents},
    )
    obs, *_ = env.step(np.array([1, 1]))
    assert obs.tolist() == [0.75 if a in agents else 0.0 for a in env.possible_agents]  # absent: padded
    env.close()
