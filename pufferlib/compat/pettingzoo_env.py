"""to_pettingzoo: a multi-agent PufferEnv as a PettingZoo ParallelEnv (passes parallel_api_test).

Agents are the PufferEnv's `possible_agents` (agent_0, agent_1, ... for a native env). An agent is
live while its mask is True and it has not terminated or truncated since the last reset; a native
multi-env resets its rows itself, so a finished agent's row runs on but leaves `agents`, as
PettingZoo requires (reset() brings every agent back). Spaces and `structured` are as in
to_gymnasium; one space object serves every agent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from pufferlib import InvalidAgentError, PufferEnv
from pufferlib.compat.gymnasium_env import agent_spaces, merge_infos, wrapped_attr


class PettingZooEnv(ParallelEnv):
    """A ParallelEnv over a PufferEnv whose rows are agents."""

    def __init__(self, env: PufferEnv, structured: bool = False) -> None:
        self.env = env
        names = getattr(env, "possible_agents", None)
        self.possible_agents = (
            list(names) if names is not None else [f"agent_{i}" for i in range(env.num_agents)]
        )
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._obs_space, self._atn_space, self._obs, self._act = agent_spaces(env, structured)
        self.metadata = {"render_modes": [], **dict(wrapped_attr(env, "metadata", {}))}
        self.render_mode = wrapped_attr(env, "render_mode", None)
        self.agents: list = []
        self._finished: set = set()

    def observation_space(self, agent: Any):
        return self._obs_space

    def action_space(self, agent: Any):
        return self._atn_space

    def _live(self) -> list:
        masks = self.env.masks
        return [a for i, a in enumerate(self.possible_agents) if masks[i] and a not in self._finished]

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.env.reset(seed)
        self._finished = set()
        self.agents = self._live()
        rows = self.env.observations
        return {a: self._obs(rows[self._index[a]]) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict):
        flat = np.zeros(self.env.actions.shape, dtype=self.env.actions.dtype)
        for agent, action in actions.items():
            if agent not in self._index:
                raise InvalidAgentError(agent, self.possible_agents, "to_pettingzoo")
            flat[self._index[agent]] = self._act(action)
        live = self.agents
        _, rewards, terminals, truncations, infos = self.env.step(flat)
        over = bool(getattr(self.env, "done", False))  # an emulated env's episode ended for everyone
        episode = merge_infos(infos)
        obs, rew, term, trunc, info = {}, {}, {}, {}, {}
        for agent in live:
            i = self._index[agent]
            obs[agent] = self._obs(self.env.observations[i])
            rew[agent] = float(rewards[i])
            term[agent] = bool(terminals[i])
            trunc[agent] = bool(truncations[i]) or (over and not term[agent])
            info[agent] = dict(episode)
            if term[agent] or trunc[agent]:
                self._finished.add(agent)
        self.agents = [] if over else self._live()
        return obs, rew, term, trunc, info

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def to_pettingzoo(env: PufferEnv, structured: bool = False) -> PettingZooEnv:
    """A multi-agent PufferEnv (PettingZooPufferEnv or a native multi-agent env) as a ParallelEnv."""
    return PettingZooEnv(env, structured=structured)
