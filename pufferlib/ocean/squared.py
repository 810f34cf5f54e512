"""Squared: move to targets on the edge of a square. Catches broken observation/action plumbing.

The agent starts at the centre of a (2d+1) x (2d+1) grid; `num_targets` targets lie on the border.
Moving onto a target gives 1/num_targets, removes the target and teleports the agent back to the
centre. The episode terminates when every target is hit and is truncated after `max_ticks` steps.
Observation: the grid (1 = target, -1 = agent). Actions: 8 moves (king's moves).
Return is the fraction of targets hit: 1.0 is optimal; solved at a mean of 0.9.
A learner that cannot solve this has its observations, actions or rewards misaligned.
"""

from __future__ import annotations

import gymnasium
import numpy as np

MOVES = np.array([(0, -1), (0, 1), (-1, 0), (1, 0), (1, -1), (-1, -1), (1, 1), (-1, 1)])


class Squared(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, distance_to_target: int = 1, num_targets: int = 4, max_ticks: int | None = None):
        if distance_to_target < 1:
            raise ValueError(f"distance_to_target must be >= 1, got {distance_to_target}")
        self.size = 2 * distance_to_target + 1
        self.center = distance_to_target
        border = [
            (x, y)
            for x in range(self.size)
            for y in range(self.size)
            if x in (0, self.size - 1) or y in (0, self.size - 1)
        ]
        if not 1 <= num_targets <= len(border):
            raise ValueError(f"num_targets must be in 1..{len(border)}, got {num_targets}")
        self.border = np.array(border)
        self.num_targets = num_targets
        self.max_ticks = max_ticks or 2 * num_targets * distance_to_target
        self.observation_space = gymnasium.spaces.Box(-1, 1, (self.size, self.size), np.float32)
        self.action_space = gymnasium.spaces.Discrete(8)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.grid = np.zeros((self.size, self.size), dtype=np.float32)
        picks = self.np_random.choice(len(self.border), self.num_targets, replace=False)
        for x, y in self.border[picks]:
            self.grid[x, y] = 1
        self.pos = np.array([self.center, self.center])
        self.grid[self.center, self.center] = -1
        self.hits = 0
        self.tick = 0
        return self.grid.copy(), {}

    def step(self, action):
        self.tick += 1
        self.grid[tuple(self.pos)] = 0
        self.pos = np.clip(self.pos + MOVES[int(action)], 0, self.size - 1)
        reward = 0.0
        if self.grid[tuple(self.pos)] == 1:
            reward = 1.0 / self.num_targets
            self.hits += 1
            self.grid[tuple(self.pos)] = 0  # the target is used up
            self.pos = np.array([self.center, self.center])
        self.grid[tuple(self.pos)] = -1
        terminated = self.hits == self.num_targets
        truncated = not terminated and self.tick >= self.max_ticks
        info = {"score": self.hits / self.num_targets} if terminated or truncated else {}
        return self.grid.copy(), reward, terminated, truncated, info

    def render(self):
        chars = {1.0: "\033[94m██\033[0m", -1.0: "\033[91m██\033[0m", 0.0: "\033[90m██\033[0m"}
        return "\n".join("".join(chars[float(v)] for v in row) for row in self.grid)
