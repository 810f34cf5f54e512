"""to_pettingzoo passes PettingZoo's parallel_api_test for every installed multi-agent binding,
and for a native multi-agent PufferEnv whose agents finish at different times."""

import warnings

import gymnasium
import numpy as np
import pytest
from _strict import skip_or_fail
from pettingzoo.test import parallel_api_test

import pufferlib
import pufferlib.environments as environments
from pufferlib import InvalidAgentError
from pufferlib.compat import to_pettingzoo

MULTI = [b for b in environments.bindings() if b.multiagent]


def passes(env, cycles: int = 150) -> None:  # past pistonball's 125-cycle episodes
    """parallel_api_test, with the problems it only warns about (missing keys, revived agents) errors."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        parallel_api_test(env, num_cycles=cycles)
    problems = [str(w.message) for w in seen if "pettingzoo/test" in w.filename]
    assert not problems, problems


@pytest.mark.parametrize("binding", MULTI, ids=lambda b: b.name)
def test_parallel_api(binding):
    if not binding.available():
        skip_or_fail(f"{binding.name} not installed: {binding.install_hint}")
    env = to_pettingzoo(binding.make_env())
    try:
        passes(env)
    finally:
        env.close()


class Countdown(pufferlib.PufferEnv):
    """Native: agent i's episode lasts 2 + i steps, then its row resets itself (as native envs do)."""

    def __init__(self, buf=None, seed=0):
        self.single_observation_space = gymnasium.spaces.Box(0, 10, (1,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self.num_agents = 3
        super().__init__(buf)
        self.left = np.zeros(3, np.int64)

    def reset(self, seed=None):
        self.left[:] = 2 + np.arange(3)
        self.observations[:, 0] = self.left
        return self.observations, []

    def step(self, actions):
        self.left -= 1
        self.terminals[:] = self.left == 0
        self.rewards[:] = self.terminals
        self.left[self.terminals] = 2 + np.flatnonzero(self.terminals)
        self.observations[:, 0] = self.left
        return self.observations, self.rewards, self.terminals, self.truncations, []


def test_native_multiagent_env():
    env = to_pettingzoo(Countdown())
    passes(env)
    env.reset()
    assert env.agents == ["agent_0", "agent_1", "agent_2"]
    lives = []
    while env.agents:
        env.step({agent: 0 for agent in env.agents})
        lives.append(list(env.agents))
    # agent i finishes after 2 + i steps and leaves; its row runs on, but it does not come back
    assert lives == [["agent_0", "agent_1", "agent_2"], ["agent_1", "agent_2"], ["agent_2"], []]


def test_unknown_agent_is_named():
    env = to_pettingzoo(environments.make("ocean/multiagent"))
    env.reset(seed=0)
    with pytest.raises(InvalidAgentError, match="'nobody' is not in possible_agents"):
        env.step({"nobody": 0})


def test_parallel_api_test_goes_red_on_a_revived_agent():
    class Reviving(type(to_pettingzoo(Countdown()))):
        def _live(self):  # forgets who finished: agents come back after their episode ended
            return [a for i, a in enumerate(self.possible_agents) if self.env.masks[i]]

    with pytest.raises(AssertionError):
        passes(Reviving(Countdown()))
