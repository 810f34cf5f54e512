"""Continuous: reach a target with a Box action. Catches a broken Gaussian head or clipping.

Observation: a target in [-1, 1]^2 (Box, float32). Action: Box(-1, 1, (2,)); the emulation clips
what a policy sends into the box. Reward: 1 - the mean distance of the (clipped) action from the
target over the two dimensions, at least 0. One-step episodes; 1.0 is optimal; solved at a mean of
0.9, which needs the mean on the target and the standard deviation down from 1 to about 0.1.
Targets lie near the bounds as often as anywhere, so early samples are often clipped: a learner
that scores the clipped action instead of the one it sampled, does not sum log-probs over the
dimensions, or cannot shrink its standard deviation does not solve it.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class Continuous(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self):
        self.observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
        self.render_mode = "ansi"

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.target = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.target, {}

    def step(self, action):
        error = float(np.abs(np.asarray(action, np.float64) - self.target).mean())
        reward = max(0.0, 1.0 - error)
        return self.target, reward, True, False, {"error": error}

    def render(self):
        return f"target {self.target.tolist()}"
