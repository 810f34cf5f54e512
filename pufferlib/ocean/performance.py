"""Performance: an env whose step costs a calibrated amount of CPU work, for benchmarks.

Each step busy-loops for a duration drawn from N(delay_mean, delay_std) microseconds (clipped at 0)
using the env's own generator. The loop counts iterations calibrated once per process against
`time.process_time` (CPU time, not wall time), so the work is fixed whatever the scheduler does;
it never sleeps, because sleeping frees the core and hides the cost being measured.
Observations are `bandwidth` float32s; episodes are truncated after `horizon` steps.
"""

from __future__ import annotations

import time

import gymnasium
import numpy as np

_LOOPS_PER_US: float | None = None


def loops_per_microsecond() -> float:
    """Busy-loop iterations per microsecond of CPU time in this process (measured once)."""
    global _LOOPS_PER_US
    if _LOOPS_PER_US is None:
        best = 0.0
        for _ in range(3):
            n = 200_000
            start = time.process_time()
            spin(n)
            elapsed = time.process_time() - start
            best = max(best, n / max(elapsed * 1e6, 1e-9))
        _LOOPS_PER_US = best
    return _LOOPS_PER_US


def spin(iterations: int) -> None:
    for _ in range(iterations):
        pass


class Performance(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(
        self, delay_mean: float = 0.0, delay_std: float = 0.0, bandwidth: int = 1, horizon: int = 1000
    ):
        if delay_mean < 0 or delay_std < 0:
            raise ValueError(f"delay_mean and delay_std are microseconds >= 0, got {delay_mean}, {delay_std}")
        self.delay_mean = delay_mean
        self.delay_std = delay_std
        self.horizon = horizon
        self.loops = loops_per_microsecond() if delay_mean > 0 else 0.0
        self.observation_space = gymnasium.spaces.Box(-1, 1, (bandwidth,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.obs = np.zeros(bandwidth, dtype=np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.tick = 0
        return self.obs, {}

    def step(self, action):
        if self.delay_mean > 0:
            delay = self.delay_mean
            if self.delay_std > 0:
                delay = max(0.0, self.np_random.normal(self.delay_mean, self.delay_std))
            spin(int(delay * self.loops))
        self.tick += 1
        return self.obs, 0.0, False, self.tick >= self.horizon, {}
