"""What the native adapters of batched simulators share: a simulator that steps all its games in one
call (ALE's vector env, Procgen's gym3 vector, Craftax's JAX program) becomes one PufferEnv whose rows
are the games.

The first reset() without a seed uses the constructor's (so Env(seed=s).reset() == Env().reset(seed=s));
reset() clears the last step's outputs and the episode statistics; step() before reset(), or actions that
do not fit the action space (one integer in [0, n) per game for Discrete, a row of integers within nvec for
MultiDiscrete, a row of finite floats for a Box, clipped into it as emulation does), raise an
APIUsageError that names the env.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from pufferlib import APIUsageError, EpisodeStats, PufferEnv


class BatchedGames(PufferEnv):
    """Subclasses set `family`, `name`, `num_agents` and the single spaces, call PufferEnv.__init__(buf),
    then `_setup(seed)`; reset() ends in `_started_with(observations)`, step() begins with `_actions(...)`."""

    family = ""
    _env: Any = None  # the simulator, when the subclass holds one: close() closes it once

    def _setup(self, seed: int | None) -> None:
        self._seed = seed
        self._started = False
        self._stats = EpisodeStats(self.num_agents)

    def _reset_seed(self, seed: int | None) -> int | None:
        return self._seed if seed is None and not self._started else seed

    def _started_with(self, observations: np.ndarray):
        self.observations[:] = observations
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self._stats.reset()
        self._started = True
        return self.observations, []

    def _actions(self, actions) -> np.ndarray:
        """The step's actions, a row per game, after checking them: int32, or float32 for a Box."""
        if not self._started:
            raise APIUsageError(f"{self.family}/{self.name}: step() called before reset()")
        space = self.single_action_space
        actions = np.asarray(actions)
        if isinstance(space, gymnasium.spaces.Discrete):
            actions = actions.reshape(-1)
            n = space.n
            if actions.size != self.num_agents or not ((actions >= 0) & (actions < n)).all():
                raise APIUsageError(
                    f"{self.family}/{self.name}: actions must be {self.num_agents} integers in [0, {n}), "
                    f"got {actions!r}"
                )
            return actions.astype(np.int32)
        width = int(np.prod(space.shape))
        if actions.size != self.num_agents * width:
            raise APIUsageError(
                f"{self.family}/{self.name}: actions must be {self.num_agents} rows of {width} "
                f"({space}), got shape {actions.shape}"
            )
        actions = actions.reshape(self.num_agents, *space.shape)
        if isinstance(space, gymnasium.spaces.Box):
            if not np.isfinite(actions).all():
                raise APIUsageError(f"{self.family}/{self.name}: actions must be finite, got {actions!r}")
            return np.clip(actions, space.low, space.high).astype(np.float32)
        if not ((actions >= 0) & (actions < space.nvec)).all():  # MultiDiscrete
            raise APIUsageError(
                f"{self.family}/{self.name}: each action row must lie within {space}, got {actions!r}"
            )
        return actions.astype(np.int32)

    def render(self):
        return self.observations[0]

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
