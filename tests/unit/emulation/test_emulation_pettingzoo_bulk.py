"""PettingZooPufferEnv's bulk paths (one write per buffer for many agents) match a row-by-row write:
Box and Dict observations, Discrete and Box actions, agents leaving, rewards as 1-element arrays."""

import gymnasium
import numpy as np

from pufferlib.emulation import PettingZooPufferEnv


class Crowd:
    """Agents a_0..a_{n-1} (listed unsorted) that leave one by one; each sees its own id and step."""

    metadata = {"name": "crowd"}

    def __init__(self, n: int = 12, obs: str = "box", actions: str = "discrete", array_rewards: bool = False):
        self.possible_agents = [f"a_{i}" for i in reversed(range(n))]
        self.n, self.kind, self.array_rewards = n, obs, array_rewards
        box = gymnasium.spaces.Box(-1e9, 1e9, (2, 3), np.float32)
        if obs == "box":
            self._obs = box
        else:
            self._obs = gymnasium.spaces.Dict(
                {
                    "view": box,
                    "mask": gymnasium.spaces.Box(0, 1, (4,), np.float32),
                    "id": gymnasium.spaces.Discrete(n),
                }
            )
        self._act = (
            gymnasium.spaces.Discrete(4, start=1)
            if actions == "discrete"
            else gymnasium.spaces.Box(-1, 1, (2,), np.float32)
        )
        self.received: list[dict] = []

    def observation_space(self, agent):
        return self._obs

    def action_space(self, agent):
        return self._act

    def _ob(self, agent: str):
        i = int(agent.split("_")[1])
        view = np.full((2, 3), 100 * i + self.t, np.float32)
        if self.kind == "box":
            return view
        return {"view": view, "mask": (np.arange(4) <= i % 4).astype(np.float32), "id": i}

    def reset(self, seed=None, options=None):
        self.t = 0
        self.agents = list(self.possible_agents)
        return {a: self._ob(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self.received.append(dict(actions))
        self.t += 1
        leaving = self.agents[-1]  # one agent leaves per step (its last step is still reported)
        obs = {a: self._ob(a) for a in self.agents}
        rewards = {
            a: (np.array([float(self.t)]) if self.array_rewards else float(self.t)) for a in self.agents
        }
        terminated = {a: a == leaving for a in self.agents}
        truncated = {a: False for a in self.agents}
        self.agents = self.agents[:-1]
        return obs, rewards, terminated, truncated, {a: {} for a in self.agents}


def _expected_rows(env: PettingZooPufferEnv, crowd: Crowd, present: list[str]) -> np.ndarray:
    """The buffer as the row-by-row path (`_write` per agent) fills it."""
    ref = PettingZooPufferEnv(Crowd(crowd.n, crowd.kind))
    for agent in present:
        ref._write(env.possible_agents.index(agent), crowd._ob(agent))
    return ref.observations


def test_box_and_dict_observations_are_written_to_their_agents_rows():
    for kind in ("box", "dict"):
        crowd = Crowd(obs=kind)
        env = PettingZooPufferEnv(crowd)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for t in range(1, 6):
            present = list(crowd.agents)
            env.step(rng.integers(0, 4, size=env.actions.shape))
            np.testing.assert_array_equal(env.observations, _expected_rows(env, crowd, present))
            np.testing.assert_array_equal(env.masks, np.isin(env.possible_agents, present))
            live = env.masks
            assert (env.rewards[live] == t).all() and not env.rewards[~live].any()
            leaving = present[-1]
            assert env.terminals.tolist() == [a == leaving for a in env.possible_agents]


def test_discrete_actions_reach_each_agent_with_the_space_start():
    crowd = Crowd()
    env = PettingZooPufferEnv(crowd)
    env.reset(seed=0)
    actions = np.arange(12).reshape(env.actions.shape) % 4
    env.step(actions)
    for agent, action in crowd.received[0].items():
        row = env.possible_agents.index(agent)
        assert action == int(actions.reshape(12, -1)[row, 0]) + 1 and isinstance(action, int)


def test_box_actions_are_clipped_per_agent():
    crowd = Crowd(actions="box")
    env = PettingZooPufferEnv(crowd)
    env.reset(seed=0)
    actions = np.linspace(-3, 3, 24, dtype=np.float32).reshape(12, 2)
    env.step(actions)
    for agent, action in crowd.received[0].items():
        row = env.possible_agents.index(agent)
        np.testing.assert_array_equal(action, np.clip(actions[row], -1, 1))


def test_one_element_array_rewards_still_land():
    crowd = Crowd(array_rewards=True)
    env = PettingZooPufferEnv(crowd)
    env.reset(seed=0)
    env.step(np.zeros(env.actions.shape, np.int64))
    assert (env.rewards == 1.0).all()


def test_episode_ends_when_every_live_agent_has_ended():
    crowd = Crowd(n=3)
    env = PettingZooPufferEnv(crowd)
    env.reset(seed=0)
    for _ in range(3):
        assert not env.done
        env.step(np.zeros(env.actions.shape, np.int64))
    assert env.done  # the last agent left


def test_a_buffer_that_is_not_contiguous_takes_the_general_path():
    from pufferlib import allocate_buffers

    crowd = Crowd(n=4)
    probe = PettingZooPufferEnv(Crowd(n=4))
    wide = allocate_buffers(8, probe.single_observation_space, probe.single_action_space)
    buf = {
        name: getattr(wide, name)[::2]
        for name in ("observations", "rewards", "terminals", "truncations", "masks", "actions")
    }
    env = PettingZooPufferEnv(crowd, buf=buf)  # every other row of a bigger buffer: no flat view of it
    assert env._stacked is None
    env.reset(seed=0)
    np.testing.assert_array_equal(buf["observations"], _expected_rows(env, crowd, list(crowd.agents)))
    assert not wide.observations[1::2].any()  # the rows in between are untouched
