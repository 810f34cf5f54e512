"""API misuse raises APIUsageError naming the env and the value."""

import gymnasium
import numpy as np
import pytest

from pufferlib import APIUsageError
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.ocean import Multiagent, Spaces, Squared


def cartpole():
    return GymnasiumPufferEnv(env_creator=gymnasium.make, env_args=("CartPole-v1",))


def test_env_and_creator_are_exclusive():
    with pytest.raises(APIUsageError, match="not both"):
        GymnasiumPufferEnv(env=Squared(), env_creator=Squared)
    with pytest.raises(APIUsageError, match="env_creator"):
        GymnasiumPufferEnv()
    with pytest.raises(APIUsageError, match="not both"):
        PettingZooPufferEnv(env=Multiagent(), env_creator=Multiagent)


def test_step_before_reset():
    env = cartpole()
    with pytest.raises(APIUsageError, match=r"CartPole-v1: step\(\) called before reset\(\)"):
        env.step(np.array([0]))


def test_step_after_done_without_reset():
    env = GymnasiumPufferEnv(env=Spaces())  # one-step episodes
    env.reset()
    env.step(np.array([0, 0]))
    assert env.done
    with pytest.raises(APIUsageError, match="after the episode ended"):
        env.step(np.array([0, 0]))
    env.reset()
    env.step(np.array([1, 1]))  # fine again after reset


@pytest.mark.parametrize("action", [[2], [-1], [7]])
def test_out_of_range_action(action):
    env = cartpole()
    env.reset()
    with pytest.raises(APIUsageError, match=r"CartPole-v1: action .* out of range"):
        env.step(np.array(action))


@pytest.mark.parametrize("action", [np.zeros((2,), int), np.zeros((1, 3), int), np.zeros((0,), int)])
def test_wrongly_shaped_action(action):
    env = GymnasiumPufferEnv(env=Spaces())
    env.reset()
    with pytest.raises(APIUsageError, match=r"action must have shape \(1, 2\)"):
        env.step(action[:1] if action.size == 2 else action)


def test_non_integer_discrete_action():
    env = cartpole()
    env.reset()
    with pytest.raises(APIUsageError, match="must be an integer"):
        env.step(np.array([0.5]))


def test_multiagent_action_shape_names_num_agents():
    env = PettingZooPufferEnv(env=Multiagent())
    env.reset()
    with pytest.raises(APIUsageError, match="num_agents=2"):
        env.step(np.zeros((3, 1), int))


class LyingEnv(gymnasium.Env):
    """Declares a Box(0, 1) observation and returns 5."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        return np.full(2, 5, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_observation_outside_declared_space_is_caught_at_start_up():
    env = GymnasiumPufferEnv(env=LyingEnv())
    with pytest.raises(APIUsageError, match="LyingEnv: observation does not match"):
        env.reset()


class TwoSpaces(Multiagent):
    def observation_space(self, agent):
        return gymnasium.spaces.Box(0, 1, (1 + self.possible_agents.index(agent),), np.float32)


def test_heterogeneous_agent_spaces_rejected():
    with pytest.raises(APIUsageError, match="different spaces"):
        PettingZooPufferEnv(env=TwoSpaces())


def test_unsupported_subspace_names_its_path():
    class TextObs(LyingEnv):
        observation_space = gymnasium.spaces.Dict({"mission": gymnasium.spaces.Text(8)})

    with pytest.raises(APIUsageError, match=r"space\.mission.*Text"):
        GymnasiumPufferEnv(env=TextObs())
