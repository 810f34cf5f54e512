"""PufferLib's environment wrappers, for code that imports `pufferlib.wrappers`.

    env = pufferlib.wrappers.PettingZooTruncatedWrapper(env)
    env = pufferlib.emulation.PettingZooPufferEnv(env=env)

PettingZooPufferEnv needs nothing of it for current PettingZoo (>= 1.24, which returns
terminations and truncations); it keeps PufferLib snippets working and brings envs written for the
older API (obs-only reset, four-value step with `dones`) to the current one.
"""

from __future__ import annotations

from typing import Any


class PettingZooTruncatedWrapper:
    """A ParallelEnv with the current API: reset -> (obs, infos), step -> 5 dicts with truncations."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.possible_agents = env.possible_agents
        self.metadata = getattr(env, "metadata", {})
        self.observation_space = env.observation_space
        self.action_space = env.action_space

    @property
    def agents(self) -> list:
        return self.env.agents

    @property
    def render_mode(self) -> Any:
        return getattr(self.env, "render_mode", None)

    def reset(self, seed: int | None = None, options: dict | None = None):
        out = self.env.reset(seed=seed) if seed is not None else self.env.reset()
        if isinstance(out, tuple) and len(out) == 2:
            obs, infos = out
        else:  # the older API returned the observations alone
            obs, infos = out, {}
        return obs, {agent: infos.get(agent, {}) for agent in obs}

    def step(self, actions: dict):
        out = self.env.step(actions)
        if len(out) == 5:
            return out
        obs, rewards, dones, infos = out  # the older API: one `dones` dict
        return obs, rewards, dones, {agent: False for agent in dones}, infos

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
