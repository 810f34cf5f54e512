"""Masked: a legal-action mask in the observation. Catches masks that are ignored, applied to the
wrong row or split wrongly between action branches.

Action: MultiDiscrete([5, 3]), two branches. Observation: {"hint": Box(0, 1, (8,)), "action_mask":
Box(0, 1, (8,), int8)}, both laid out as the 5 actions of branch 0 then the 3 of branch 1. Every
step, in each branch, `hint` marks two actions: the target (legal) and a lure (always illegal).
Other actions are legal or not at random, and some steps allow only the target. A learner that
honours the mask only has to learn "take a hinted action"; one that ignores it takes the lure half
the time, and a mask read from the wrong row or split at the wrong place allows illegal actions.

Reward 0.5 / `horizon` per branch whose action is its target; episodes last `horizon` steps, so
a return of 1.0 is optimal; solved at a mean of 0.9. An illegal action (in any branch), with
`illegal="lose"` (the default, as PettingZoo's classic games): the episode ends with reward -1
and the info `illegal` 1. With `illegal="raise"` it raises APIUsageError instead (what the
trainer's mask tests run with: a single illegal action fails them).
"""

from __future__ import annotations

import gymnasium
import numpy as np

from pufferlib import APIUsageError

BRANCHES = (5, 3)


class Masked(gymnasium.Env):
    SOLVED = 0.9
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, horizon: int = 8, illegal: str = "lose"):
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal must be 'lose' or 'raise', got {illegal!r}")
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.horizon = horizon
        self.illegal = illegal
        width = sum(BRANCHES)
        self.offsets = np.cumsum((0, *BRANCHES))[:-1]
        self.observation_space = gymnasium.spaces.Dict(
            {
                "hint": gymnasium.spaces.Box(0, 1, (width,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (width,), np.int8),
            }
        )
        self.action_space = gymnasium.spaces.MultiDiscrete(BRANCHES)
        self.render_mode = "ansi"

    def _draw(self) -> dict[str, np.ndarray]:
        hint = np.zeros(sum(BRANCHES), np.float32)
        mask = np.zeros(sum(BRANCHES), np.int8)
        self.targets = []
        for offset, n in zip(self.offsets, BRANCHES, strict=True):
            target, lure = self.np_random.choice(n, size=2, replace=False)
            legal = self.np_random.random(n) < 0.5
            legal[target], legal[lure] = True, False
            hint[offset + target] = hint[offset + lure] = 1
            mask[offset : offset + n] = legal
            self.targets.append(int(target))
        self.obs = {"hint": hint, "action_mask": mask}
        return self.obs

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.tick = 0
        return self._draw(), {}

    def step(self, action):
        action = np.asarray(action).reshape(-1)
        legal = all(self.obs["action_mask"][o + int(a)] for o, a in zip(self.offsets, action, strict=True))
        if not legal:
            if self.illegal == "raise":
                raise APIUsageError(
                    f"ocean/masked: action {action.tolist()} is not allowed by the action_mask "
                    f"{self.obs['action_mask'].tolist()} (branches of {BRANCHES})"
                )
            return self.obs, -1.0, True, False, {"illegal": 1.0}
        hits = sum(int(a) == t for a, t in zip(action, self.targets, strict=True))
        reward = 0.5 * hits / self.horizon
        self.tick += 1
        done = self.tick >= self.horizon
        info = {"illegal": 0.0} if done else {}
        return self._draw(), reward, done, False, info

    def render(self):
        return f"targets {self.targets}, mask {self.obs['action_mask'].tolist()}"
