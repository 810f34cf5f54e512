"""Bandit: a multi-armed bandit with one good arm. Catches learners that cannot learn at all.

Every instance shares the same good arm (drawn from `solution_seed`). One-step episodes: reward
`reward_scale` for the good arm, 0 otherwise, plus Gaussian noise of std `reward_noise` (scaled).
The observation is constant. Solved at a mean return of 0.9 (reward_scale 1, no noise).
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Bandit(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        num_actions: int = 4,
        reward_scale: float = 1.0,
        reward_noise: float = 0.0,
        solution_seed: int = 42,
    ):
        self.num_actions = num_actions
        self.reward_scale = reward_scale
        self.reward_noise = reward_noise
        self.solution = int(np.random.default_rng(solution_seed).integers(num_actions))
        self.observation_space = gymnasium.spaces.Box(0, 1, (1,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(num_actions)
        self.obs = np.ones(1, dtype=np.float32)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.obs.copy(), {}

    def step(self, action):
        correct = int(action) == self.solution
        noise = self.reward_noise * self.np_random.standard_normal() if self.reward_noise else 0.0
        reward = (float(correct) + noise) * self.reward_scale
        return self.obs.copy(), reward, True, False, {"score": float(correct)}

    def render(self):
        return f"good arm {self.solution}"
