"""Stochastic: the optimal policy is a coin with bias p. Catches learners that cannot stay stochastic.

The observation is constant, so a memoryless policy cannot count. After `horizon` steps of
Discrete(2) actions the reward is 1 - |f - p| / max(p, 1 - p), where f is the fraction of 0
actions in the episode. Always picking the likelier action scores 1 - (1 - p) / p (0.67 at
p = 0.75); sampling action 0 with probability p scores about 0.95 at horizon 50.
Solved at a mean return of 0.9. Do not use a policy with memory: it could count instead.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Stochastic(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, p: float = 0.75, horizon: int = 50):
        if not 0.5 < p < 1:
            raise ValueError(f"p must be in (0.5, 1) so that the optimum is stochastic, got {p}")
        self.p = p
        self.horizon = horizon
        self.observation_space = gymnasium.spaces.Box(0, 1, (1,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.obs = np.zeros(1, dtype=np.float32)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.zeros = 0
        self.tick = 0
        return self.obs.copy(), {}

    def step(self, action):
        self.zeros += int(action) == 0
        self.tick += 1
        terminated = self.tick == self.horizon
        reward, info = 0.0, {}
        if terminated:
            fraction = self.zeros / self.horizon
            reward = 1.0 - abs(fraction - self.p) / max(self.p, 1 - self.p)
            info = {"score": reward, "fraction_zero": fraction}
        return self.obs.copy(), reward, terminated, False, info

    def render(self):
        return f"{self.zeros}/{self.tick} zeros (target {self.p:.2f})"
