"""Password: guess a fixed binary string. Catches learners that determinize too early (exploration).

The password is the same for every instance (drawn from `password_seed`). The agent enters one bit
per step; the observation is the bits entered so far (-1 = not yet), so no memory is needed.
Reward 1 at the end if every bit is right, else 0: a random policy succeeds 1 time in 2**length,
so the learner must keep exploring until its first success and then latch onto it.
Solved at a mean return of 0.9. Do not tune entropy higher than for real envs: that is the point.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Password(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, password_length: int = 5, password_seed: int = 42):
        self.length = password_length
        self.solution = (
            np.random.default_rng(password_seed).integers(0, 2, password_length).astype(np.float32)
        )
        self.observation_space = gymnasium.spaces.Box(-1, 1, (password_length,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.guess = np.full(self.length, -1, dtype=np.float32)
        self.tick = 0
        return self.guess.copy(), {}

    def step(self, action):
        self.guess[self.tick] = int(action)
        self.tick += 1
        terminated = self.tick == self.length
        reward = float(terminated and np.array_equal(self.guess, self.solution))
        info = {"score": reward} if terminated else {}
        return self.guess.copy(), reward, terminated, False, info

    def render(self):
        return f"solution {self.solution.astype(int).tolist()} guess {self.guess.astype(int).tolist()}"
