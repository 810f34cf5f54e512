"""PettingZoo: sorted fixed population, padding and masks as agents leave."""

import numpy as np

from pufferlib.emulation import PettingZooPufferEnv
from pufferlib.ocean import Multiagent


class Reversed(Multiagent):
    """possible_agents in reverse order: emulation must still sort them."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.possible_agents = list(reversed(self.possible_agents))


def test_population_is_sorted():
    env = PettingZooPufferEnv(env=Reversed())
    assert env.possible_agents == ["agent_0", "agent_1"]
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs[:, 0], [0, 1])  # agent_0 sees 0, agent_1 sees 1


def test_each_agent_gets_its_own_reward():
    env = PettingZooPufferEnv(env=Multiagent(horizon=2))
    env.reset()
    _, rewards, _, _, _ = env.step(np.array([[0], [0]]))  # right for agent_0 only
    np.testing.assert_allclose(rewards, [0.5, 0.0])


def test_leaving_agent_is_padded_and_masked():
    env = PettingZooPufferEnv(env=Multiagent(horizon=4, leave_after=2))
    env.reset()
    right = np.array([[0], [1]])
    _, _, terminals, _, _ = env.step(right)
    assert env.masks.tolist() == [True, True] and not terminals.any()
    obs, rewards, terminals, _, _ = env.step(right)  # agent_1 terminates on this step: still a real row
    assert env.masks.tolist() == [True, True] and terminals.tolist() == [False, True]
    obs, rewards, terminals, _, _ = env.step(right)  # agent_1 is gone: zero obs, reward 0, mask False
    assert env.masks.tolist() == [True, False]
    assert obs[1].tolist() == [0] and rewards[1] == 0 and not terminals[1]
    obs, rewards, terminals, _, infos = env.step(right)
    assert env.done and terminals[0]
    assert infos[0]["episode_length"] == 4
    np.testing.assert_allclose(infos[0]["episode_return"], (1.0 + 0.5) / 2)


def test_reset_restores_the_population():
    env = PettingZooPufferEnv(env=Multiagent(horizon=1, leave_after=1))
    env.reset()
    env.step(np.array([[0], [1]]))
    assert env.done
    env.reset()
    assert env.masks.tolist() == [True, True]
