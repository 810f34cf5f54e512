"""GymnasiumVectorEnv: our Serial/Multiprocessing (or a native multi-env) as a gymnasium VectorEnv.

    vecenv = pufferlib.vector.make(creator, backend=pufferlib.vector.Multiprocessing, num_envs=8)
    envs = pufferlib.compat.GymnasiumVectorEnv(vecenv)
    obs, infos = envs.reset(seed=1)                    # env i is seeded with seed + i, as gymnasium does
    obs, rewards, terminations, truncations, infos = envs.step(actions)
    if "episode" in infos:                             # CleanRL's check: dict of arrays plus "_episode"
        returns = infos["episode"]["r"][infos["_episode"]]

One gymnasium sub-env per agent row (num_envs * agents per env); every step steps all of them, so
the vector env must return whole batches (batch_size == num_envs, the default).

Autoreset, stated in `metadata["autoreset_mode"]`:
- NEXT_STEP for emulated envs (pufferlib.emulation), as gymnasium's own vector envs default to: the
  step after an episode ends resets that sub-env, ignores its action and returns its first
  observation with reward 0 and no flags.
- SAME_STEP for native envs, which reset themselves inside the step that ends an episode (their
  final observation is gone: no `final_obs`), and for emulated Gymnasium envs built through
  `autoreset_creator` / `make_vector(..., autoreset_mode="SameStep")`, which put the final
  observation in `infos["final_obs"]` (SB3's VecEnv needs this mode).

Infos follow gymnasium: a dict of arrays with a `_key` mask each. `episode` ({r, l, t}, the vector
RecordEpisodeStatistics layout) is counted here from rewards and flags, for every backend; the env's
own episode infos (our native API's list of dicts) join it, one per finished sub-env.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import pufferlib.vector
from pufferlib import APIUsageError, PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.vector.creators import build_env


def emulated_env(env: Any) -> GymnasiumPufferEnv | PettingZooPufferEnv | None:
    """The emulation layer under `env` (through PufferEnv wrappers), or None for a native env."""
    while not isinstance(env, GymnasiumPufferEnv | PettingZooPufferEnv):
        inner = getattr(env, "env", None)
        if not isinstance(inner, PufferEnv):
            return None
        env = inner
    return env


def autoreset_mode_of(driver: PufferEnv) -> AutoresetMode:
    emulated = emulated_env(driver)
    if emulated is None or getattr(emulated, "autoreset", False):
        return AutoresetMode.SAME_STEP
    return AutoresetMode.NEXT_STEP


def _autoresetting(
    env_creator: Callable, *args: Any, buf: Any = None, seed: int | None = None, **kwargs: Any
):
    env = build_env(env_creator, args, kwargs, buf, seed)
    emulated = emulated_env(env)
    if isinstance(emulated, PettingZooPufferEnv):
        env.close()
        raise APIUsageError(
            f"same-step autoreset is for single-agent envs; {emulated.name} is a PettingZoo env, which "
            "resets on the step after its episode ends: use autoreset_mode='NextStep'"
        )
    if emulated is not None:
        emulated.autoreset = True
    return env  # a native env resets itself in the step already


def autoreset_creator(env_creator: Callable) -> Callable:
    """A picklable creator whose emulated Gymnasium env resets inside the step that ends an episode."""
    return functools.partial(_autoresetting, env_creator)


class GymnasiumVectorEnv(gymnasium.vector.VectorEnv):
    """A gymnasium.vector.VectorEnv over a pufferlib vector env (or a native multi-env PufferEnv).

    `copy=False` returns the shared buffers themselves (overwritten by the next step), as
    gymnasium's `copy=False`; close() closes the vector env.
    """

    def __init__(self, vecenv: Any, copy: bool = True) -> None:
        rows = int(vecenv.num_agents)
        if int(vecenv.agents_per_batch) != rows:
            raise APIUsageError(
                f"GymnasiumVectorEnv steps every sub-env each step, but this vector env returns batches of "
                f"{vecenv.agents_per_batch} of its {rows} agent rows: build it with batch_size=num_envs "
                "(the default)"
            )
        self.vecenv = vecenv
        self.num_envs = rows
        self.single_observation_space = vecenv.single_observation_space
        self.single_action_space = vecenv.single_action_space
        self.observation_space = batch_space(self.single_observation_space, rows)
        self.action_space = batch_space(self.single_action_space, rows)
        self.autoreset_mode = autoreset_mode_of(vecenv.driver_env)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self.render_mode = None
        self.copy = copy
        self._returns = np.zeros(rows, dtype=np.float64)
        self._lengths = np.zeros(rows, dtype=np.int64)
        self._starts = np.zeros(rows, dtype=np.float64)
        self._resetting = np.zeros(rows, dtype=bool)  # NEXT_STEP: rows the coming step resets
        self._warned_unmatched = False

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        if isinstance(seed, list | tuple | np.ndarray):
            seeds = [int(s) for s in seed]
            if seeds != list(range(seeds[0], seeds[0] + len(seeds))) or len(seeds) != self.num_envs:
                raise APIUsageError(
                    f"reset(seed=list) takes {self.num_envs} consecutive seeds (sub-env i gets seed + i), "
                    f"got {seeds}"
                )
            seed = seeds[0]
        super().reset(seed=seed)
        self.vecenv.async_reset(seed)
        obs = self.vecenv.recv()[0]
        self._returns[:] = 0
        self._lengths[:] = 0
        self._starts[:] = time.perf_counter()
        self._resetting[:] = False
        return (obs.copy() if self.copy else obs), {}

    def step(self, actions: Any):
        self.vecenv.send(np.asarray(actions))
        obs, rewards, terminals, truncations, env_infos, _, _ = self.vecenv.recv()
        now = time.perf_counter()
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            fresh = self._resetting  # reset in this step: no step of the new episode counted yet
            self._returns[fresh] = 0
            self._lengths[fresh] = 0
            self._starts[fresh] = now
            self._returns[~fresh] += rewards[~fresh]
            self._lengths[~fresh] += 1
        else:
            self._returns += rewards
            self._lengths += 1
        ended = terminals | truncations
        infos = self._episode_infos(np.flatnonzero(ended), list(env_infos or ()), now)
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._resetting = ended.copy()
        if self.copy:
            obs, terminals, truncations = obs.copy(), terminals.copy(), truncations.copy()
        return obs, rewards.astype(np.float64), terminals, truncations, infos

    def _episode_infos(self, rows: np.ndarray, env_infos: list[dict], now: float) -> dict:
        infos: dict = {}
        matched = len(env_infos) == len(rows)
        if env_infos and not matched:  # e.g. a multi-agent env: one info per env, several rows ended
            if not self._warned_unmatched:
                self._warned_unmatched = True
                warnings.warn(
                    f"{len(env_infos)} env infos for {len(rows)} finished sub-envs: they cannot be matched "
                    "to rows, so they are passed on as infos['puffer_infos'] (a list)",
                    stacklevel=3,
                )
            infos["puffer_infos"] = env_infos
        for k, row in enumerate(rows):
            row_info: dict = dict(env_infos[k]) if matched else {}
            final = row_info.pop("final_observation", None)
            episode = {
                "r": float(self._returns[row]),
                "l": int(self._lengths[row]),
                "t": round(now - float(self._starts[row]), 6),
            }
            if final is not None:  # gymnasium's same-step layout, as SyncVectorEnv(SAME_STEP) gives
                row_info = {**row_info, "final_obs": final, "final_info": {**row_info, "episode": episode}}
            row_info["episode"] = episode  # and at the top, where CleanRL looks
            infos = self._add_info(infos, row_info, int(row))
        if self.autoreset_mode is AutoresetMode.SAME_STEP and len(rows):
            self._returns[rows] = 0
            self._lengths[rows] = 0
            self._starts[rows] = now
        return infos

    def render(self) -> Any:
        return None

    def close_extras(self, **kwargs: Any) -> None:
        vecenv = getattr(self, "vecenv", None)  # absent when __init__ refused the vector env
        if vecenv is not None:
            vecenv.close()


def make_vector(
    env_creator: Callable,
    num_envs: int = 1,
    backend: Any = "serial",
    seed: int | None = 0,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    copy: bool = True,
    env_args: Any = None,
    env_kwargs: Any = None,
    **kwargs: Any,
) -> GymnasiumVectorEnv:
    """pufferlib.vector.make(...) as a GymnasiumVectorEnv in the autoreset mode asked for.

    NEXT_STEP suits emulated envs as they are; SAME_STEP makes emulated Gymnasium envs reset inside
    the ending step (final observation in infos["final_obs"]) and is what native envs do anyway.
    kwargs go to pufferlib.vector.make (num_workers, zero_copy, overwork).
    """
    mode = AutoresetMode(autoreset_mode)
    if mode is AutoresetMode.DISABLED:
        raise APIUsageError(
            "autoreset_mode DISABLED is not supported: our envs reset themselves; use NextStep"
        )
    if mode is AutoresetMode.SAME_STEP:
        if isinstance(env_creator, list | tuple):
            env_creator = [autoreset_creator(c) for c in env_creator]
        else:
            env_creator = autoreset_creator(env_creator)
    vecenv = pufferlib.vector.make(
        env_creator, env_args, env_kwargs, backend=backend, num_envs=num_envs, seed=seed, **kwargs
    )
    envs = GymnasiumVectorEnv(vecenv, copy=copy)
    if envs.autoreset_mode is not mode:
        envs.close()
        raise APIUsageError(
            f"this env resets itself in the step that ends an episode (a native env): use "
            f"autoreset_mode='{envs.autoreset_mode.value}'"
        )
    return envs
