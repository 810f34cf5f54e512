"""Spaces: Dict observations and Dict actions. Catches broken (un)flattening of structured spaces.

Observation: {'image': Box(5, 5) float32, 'flat': Box(5,) int8}. Action: {'image': Discrete(2),
'flat': Discrete(2)}. Each action part is rewarded 0.5 when it says whether the sum of its
observation part is positive. One-step episodes; return 1.0 is optimal; solved at a mean of 0.9.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Spaces(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self):
        self.observation_space = gymnasium.spaces.Dict(
            {
                "image": gymnasium.spaces.Box(-5, 5, (5, 5), np.float32),
                "flat": gymnasium.spaces.Box(-1, 1, (5,), np.int8),
            }
        )
        self.action_space = gymnasium.spaces.Dict(
            {"image": gymnasium.spaces.Discrete(2), "flat": gymnasium.spaces.Discrete(2)}
        )
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        image = np.clip(self.np_random.standard_normal((5, 5)), -5, 5).astype(np.float32)
        flat = self.np_random.integers(-1, 2, 5).astype(np.int8)
        self.obs = {"image": image, "flat": flat}
        self.answer = {"image": int(image.sum() > 0), "flat": int(flat.sum() > 0)}
        return self.obs, {}

    def step(self, action):
        reward = 0.5 * (int(action["image"]) == self.answer["image"])
        reward += 0.5 * (int(action["flat"]) == self.answer["flat"])
        return self.obs, reward, True, False, {"score": reward}

    def render(self):
        return f"answer {self.answer}"
