"""Memory: recite a random bit sequence after a delay. Catches broken recurrence (state, BPTT).

Steps 0..L-1 show one bit each (0 or 1); the next D steps show -1 (the delay); during the last L
steps the agent must output the bits in order, seeing -1; each correct bit gives 1/L.
Even L=1, D=0 needs one step of memory.
Return 1.0 is perfect; a memoryless policy averages 0.5. Solved at a mean return of 0.9.
Keep L and D small, or the task starts testing credit assignment instead of memory.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Memory(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, mem_length: int = 2, mem_delay: int = 0):
        if mem_length < 1 or mem_delay < 0:
            raise ValueError(f"need mem_length >= 1 and mem_delay >= 0, got {mem_length}, {mem_delay}")
        self.length = mem_length
        self.delay = mem_delay
        self.horizon = 2 * mem_length + mem_delay
        self.observation_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.bits = self.np_random.integers(0, 2, self.length)
        self.answer = np.full(self.length, -1)
        self.tick = 0
        return np.array([self.bits[0]], dtype=np.float32), {}

    def step(self, action):
        recall = self.tick - self.length - self.delay  # index of the bit this action recites
        reward = 0.0
        if 0 <= recall < self.length:
            self.answer[recall] = int(action)
            reward = float(int(action) == self.bits[recall]) / self.length
        self.tick += 1
        obs = np.array([self.bits[self.tick] if self.tick < self.length else -1], dtype=np.float32)
        terminated = self.tick == self.horizon
        info = {"score": float(np.array_equal(self.answer, self.bits))} if terminated else {}
        return obs, reward, terminated, False, info

    def render(self):
        return f"bits {self.bits.tolist()} answer {self.answer.tolist()}"
