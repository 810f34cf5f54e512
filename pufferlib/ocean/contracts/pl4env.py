"""A PufferLib 4.0 binding (pl4/vecenv.h) as one PufferEnv: its spaces come from the binding's own constants.

4.0 has no per-env Python class: OBS_SIZE, OBS_TENSOR_T, NUM_ATNS and ACT_SIZES in binding.c are the whole
declaration, so the spaces here are those (a flat Box of OBS_SIZE; Discrete or MultiDiscrete of ACT_SIZES) and
cannot disagree with what the C writes (probe.py checks that it writes no more). Instances reset themselves.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv


def _bounds(dtype: np.dtype) -> tuple[Any, Any]:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min, info.max
    return -np.inf, np.inf


class Pl4Env(PufferEnv):
    """`num_envs` instances of a 4.0 env (each with the num_agents its my_init sets) as agent rows."""

    def __init__(
        self, module: ModuleType, num_envs: int = 1, buf: Any = None, seed: int | None = 0, **kwargs: Any
    ) -> None:
        self.module = module
        self._handle = None
        game = {k: float(v) for k, v in kwargs.items()}  # 4.0's Dict holds doubles
        self._handle, self.num_agents = module.vec_create(int(num_envs), int(seed or 0), game)
        self.num_envs = int(num_envs)
        dtype = np.dtype(module.OBS_DTYPE)
        low, high = _bounds(dtype)
        self.single_observation_space = gymnasium.spaces.Box(low, high, shape=(module.OBS_SIZE,), dtype=dtype)
        sizes = list(module.ACT_SIZES)
        self.single_action_space = (
            gymnasium.spaces.Discrete(sizes[0]) if len(sizes) == 1 else gymnasium.spaces.MultiDiscrete(sizes)
        )
        super().__init__(buf)
        module.vec_attach(
            self._handle, self.observations, self.actions, self.rewards, self.terminals, self.truncations
        )

    def reset(self, seed: int | None = None):
        self.module.vec_reset(self._handle, seed)
        self.module.vec_log(self._handle)  # episodes cut short by a reset are not reported
        return self.observations, []

    def step(self, actions):
        if actions is not self.actions:
            self.actions[:] = np.asarray(actions).reshape(self.actions.shape)
        ended = self.module.vec_step(self._handle)
        log = self.module.vec_log(self._handle) if ended else None
        return self.observations, self.rewards, self.terminals, self.truncations, [log] if log else []

    def render(self, index: int = 0):
        self.module.vec_render(self._handle, index)

    def close(self) -> None:
        if self._handle is not None:
            self.module.vec_close(self._handle)
