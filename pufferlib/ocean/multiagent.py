"""Multiagent: two agents, two different right answers. Catches agents mixed up in the batch.

A PettingZoo ParallelEnv. Agent `agent_0` sees 0 and is rewarded for action 0; `agent_1` sees 1
and is rewarded for action 1. Episodes last `horizon` steps. With `leave_after` set, agent_1
leaves after that many steps (later steps are padded: mask False), which exercises variable
populations. Return per agent (averaged over agents) of 1.0 is optimal; solved at a mean of 0.9.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv


class Multiagent(ParallelEnv):
    SOLVED = 0.9
    metadata = {"name": "ocean_multiagent", "render_modes": ["ansi"]}

    def __init__(self, horizon: int = 4, leave_after: int | None = None):
        self.possible_agents = ["agent_0", "agent_1"]
        self.identity = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self.horizon = horizon
        self.leave_after = leave_after
        self._obs_space = gymnasium.spaces.Box(0, 1, (1,), np.float32)
        self._atn_space = gymnasium.spaces.Discrete(2)
        self.render_mode = "ansi"

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._atn_space

    def _obs(self):
        return {a: np.array([self.identity[a]], dtype=np.float32) for a in self.agents}

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.tick = 0
        self.correct = {a: 0 for a in self.possible_agents}
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions):
        self.tick += 1
        rewards, terminated, truncated, infos = {}, {}, {}, {}
        for agent in self.agents:
            ok = int(actions[agent]) == self.identity[agent]
            self.correct[agent] += ok
            rewards[agent] = float(ok) / self.horizon
            leaving = agent == "agent_1" and self.leave_after is not None and self.tick >= self.leave_after
            terminated[agent] = self.tick >= self.horizon or leaving
            truncated[agent] = False
            infos[agent] = {"score": self.correct[agent] / self.tick} if terminated[agent] else {}
        obs = self._obs()
        self.agents = [a for a in self.agents if not terminated[a]]
        return obs, rewards, terminated, truncated, infos

    def render(self):
        return f"tick {self.tick} correct {self.correct}"
