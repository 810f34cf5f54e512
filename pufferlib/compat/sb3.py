"""SB3VecEnv: a gymnasium VectorEnv (e.g. GymnasiumVectorEnv over our Multiprocessing) as a
stable-baselines3 VecEnv, so SB3's algorithms train on our vectorization.

    from pufferlib.compat import make_vector
    from pufferlib.compat.sb3 import SB3VecEnv
    venv = SB3VecEnv(make_vector(creator, num_envs=8, backend="multiprocessing", autoreset_mode="SameStep"))
    stable_baselines3.PPO("MlpPolicy", venv).learn(50_000)

SB3 expects same-step autoreset (the returned observation of a finished env is the next episode's
first one; the last one is in `infos[i]["terminal_observation"]`), so the vector env must state
AutoresetMode.SAME_STEP. Episode statistics reach SB3's logger as `infos[i]["episode"]`.
Needs `pip install stable-baselines3` (in the dev extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env import VecEnv

from pufferlib import APIUsageError


class SB3VecEnv(VecEnv):
    """stable-baselines3's VecEnv API over a same-step gymnasium VectorEnv (closed with it)."""

    def __init__(self, env: VectorEnv) -> None:
        mode = env.metadata.get("autoreset_mode")
        if mode is not AutoresetMode.SAME_STEP:
            raise APIUsageError(
                f"SB3 needs a vector env that resets a finished env in the same step; this one states "
                f"autoreset_mode={mode}. Build it with "
                "pufferlib.compat.make_vector(..., autoreset_mode='SameStep')"
            )
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # VecEnv.seed(s) sets env i to s + i, as our vector envs do
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, rewards, terminations, truncations, info = self.env.step(self._actions)
        dones = terminations | truncations
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        episode, final = info.get("episode"), info.get("final_obs")
        for i in np.flatnonzero(dones):
            row = infos[i]
            row["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
            if final is not None and info["_final_obs"][i]:
                row["terminal_observation"] = final[i]
            if episode is not None and info["_episode"][i]:
                row["episode"] = {key: episode[key][i].item() for key in ("r", "l", "t")}
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def _count(self, indices: Any) -> int:
        if indices is None:
            return self.num_envs
        return 1 if isinstance(indices, int) else len(list(indices))

    # The sub-envs live in worker processes: attributes are the vector env's, one per index.
    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value] * self._count(indices)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        result = getattr(self.env, method_name)(*args, **kwargs)
        return [result] * self._count(indices)

    def env_is_wrapped(self, wrapper_class: type, indices: Sequence[int] | int | None = None) -> list[bool]:
        return [False] * self._count(indices)
