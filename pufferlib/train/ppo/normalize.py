"""Observation normalisation and reward scaling from running statistics, as SB3's VecNormalize.

`VecNormalize(vecenv)` wraps a pufferlib vector env; `recv()` returns

- observations minus their running mean, over their running standard deviation, clipped to
  +-clip_obs (SB3's VecNormalize, CleanRL's NormalizeObservation + clip in ppo_continuous_action);
- rewards over the running standard deviation of each row's discounted return, clipped to
  +-clip_reward (not re-centred: a constant reward stays constant in sign; SB3's norm_reward,
  CleanRL's NormalizeReward).

Everything else passes through, the episode infos included: episode returns stay the env's own.
The statistics update while `training` is True; evaluation freezes them (and leaves rewards as
they are). They belong to the policy (it only ever saw normalised observations), so a checkpoint
saves them (`state_dict`) and `puffer eval` loads them back (`load_state_dict`).

Rows are agent rows, as everywhere in the trainer: padding rows (mask False) update nothing, and a
row's return is reset when its episode ends. Emulated envs deliver an episode's final observation
with the done flag and reset on the next send: the reward that arrives with the first observation
of the next episode ends no real transition, so it does not enter the return statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import pufferlib
from pufferlib.train.config import Config, ConfigError


class RunningMeanStd:
    """Mean and variance of a stream of batches (Chan et al.'s parallel update, as SB3 and gymnasium).

    `count` starts at a tiny epsilon, so the first batch sets the statistics almost alone.
    """

    def __init__(self, shape: tuple[int, ...] = (), epsilon: float = 1e-4) -> None:
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = epsilon

    def update(self, batch: np.ndarray) -> None:
        """Fold in a batch of samples (first axis = samples)."""
        n = batch.shape[0]
        if n == 0:
            return
        batch = batch.astype(np.float64, copy=False)
        batch_mean, batch_var = batch.mean(axis=0), batch.var(axis=0)
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * n / total
        self.var = m2 / total
        self.count = total

    def state_dict(self, prefix: str) -> dict[str, Any]:
        return {
            f"{prefix}_mean": torch.from_numpy(np.array(self.mean)),
            f"{prefix}_var": torch.from_numpy(np.array(self.var)),
            f"{prefix}_count": float(self.count),
        }

    def load_state_dict(self, state: dict[str, Any], prefix: str) -> None:
        mean = np.asarray(state[f"{prefix}_mean"], np.float64)
        if mean.shape != self.mean.shape:
            raise ConfigError(
                f"saved {prefix} statistics have shape {mean.shape}, this env's are {self.mean.shape}: "
                "the checkpoint was trained on an env with other observations"
            )
        self.mean = mean
        self.var = np.asarray(state[f"{prefix}_var"], np.float64)
        self.count = float(state[f"{prefix}_count"])


class VecNormalize:
    """A pufferlib vector env whose recv() normalises observations and scales rewards.

    Attributes it does not define (num_agents, driver_env, send, close, ...) are the wrapped env's.
    """

    def __init__(
        self,
        vecenv: Any,
        obs: bool = True,
        reward: bool = True,
        clip_obs: float = 10.0,
        clip_reward: float = 10.0,
        gamma: float = 0.99,
        epsilon: float = 1e-8,
    ) -> None:
        self.vecenv = vecenv
        self.training = True
        self.clip_obs, self.clip_reward, self.gamma, self.epsilon = clip_obs, clip_reward, gamma, epsilon
        driver = vecenv.driver_env
        self.obs_rms = None
        if obs:
            space = driver.single_observation_space
            if (driver.emulated or {}).get("observation_dtype") is not None or space.dtype.kind not in "fiu":
                raise ConfigError(
                    f"normalize.obs needs plain numeric observations; this env's are {_describe(driver)}. "
                    "Set --normalize.obs false (or normalise inside the policy)"
                )
            self.obs_rms = RunningMeanStd(tuple(space.shape))
        self.ret_rms = RunningMeanStd(()) if reward else None
        rows = int(vecenv.num_agents)
        self.returns = np.zeros(rows, np.float64)  # per row: the discounted return so far
        self.resets_on_send = pufferlib.resets_on_send(driver)
        self.last_done = np.ones(rows, dtype=bool)  # before the first observation: "an episode ended"
        self.last_mask = np.zeros(rows, dtype=bool)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["vecenv"], name)

    def recv(self):
        obs, rewards, terminals, truncations, infos, env_ids, masks = self.vecenv.recv()
        ids = np.asarray(env_ids, dtype=np.int64)
        live = np.asarray(masks, dtype=bool)
        if self.obs_rms is not None:
            if self.training:
                self.obs_rms.update(np.asarray(obs)[live])
            obs = self.normalize_obs(obs)
        if self.ret_rms is not None and self.training:
            rewards = self._scale_rewards(rewards, terminals, truncations, ids, live)
        return obs, rewards, terminals, truncations, infos, env_ids, masks

    def normalize_obs(self, obs: np.ndarray) -> np.ndarray:
        """(obs - mean) / sqrt(var + epsilon), clipped; float32, a new array (the buffer is untouched)."""
        scaled = (np.asarray(obs, np.float64) - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)
        return np.clip(scaled, -self.clip_obs, self.clip_obs).astype(np.float32)

    def _scale_rewards(
        self, rewards, terminals, truncations, ids: np.ndarray, live: np.ndarray
    ) -> np.ndarray:
        done = np.asarray(terminals, dtype=bool) | np.asarray(truncations, dtype=bool)
        # The reward is the outcome of a real transition: the row was present before and now, and
        # (emulated envs) the previous observation was not an episode's final one.
        real = live & self.last_mask[ids]
        if self.resets_on_send:
            real &= ~self.last_done[ids]
        rewards = np.asarray(rewards, np.float64)
        rows = ids[real]
        self.returns[rows] = self.returns[rows] * self.gamma + rewards[real]
        self.ret_rms.update(self.returns[rows])
        self.returns[ids[real & done]] = 0.0
        self.last_done[ids] = done
        self.last_mask[ids] = live
        scaled = rewards / np.sqrt(self.ret_rms.var + self.epsilon)
        return np.clip(scaled, -self.clip_reward, self.clip_reward).astype(np.float32)

    def state_dict(self) -> dict[str, Any]:
        """The running statistics (tensors and floats: a checkpoint loads with weights_only=True)."""
        state: dict[str, Any] = {}
        if self.obs_rms is not None:
            state.update(self.obs_rms.state_dict("obs"))
        if self.ret_rms is not None:
            state.update(self.ret_rms.state_dict("return"))
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for prefix, rms in (("obs", self.obs_rms), ("return", self.ret_rms)):
            if rms is None:
                continue
            if f"{prefix}_mean" not in state:
                raise ConfigError(
                    f"the checkpoint holds no {prefix} normalisation statistics, but its config turns "
                    f"normalize.{'obs' if prefix == 'obs' else 'reward'} on"
                )
            rms.load_state_dict(state, prefix)


def wrap(vecenv: Any, cfg: Config) -> Any:
    """`vecenv` behind VecNormalize when the config's [normalize] section asks for it, else itself."""
    norm = cfg.get("normalize")  # absent from checkpoints saved before normalisation existed
    if not norm or not (norm["obs"] or norm["reward"]):
        return vecenv
    for key in ("clip_obs", "clip_reward", "epsilon"):
        if norm[key] <= 0:
            raise ConfigError(f"normalize.{key} must be > 0, got {norm[key]}")
    try:
        return VecNormalize(
            vecenv,
            obs=norm["obs"],
            reward=norm["reward"],
            clip_obs=norm["clip_obs"],
            clip_reward=norm["clip_reward"],
            gamma=cfg["train"]["gamma"],
            epsilon=norm["epsilon"],
        )
    except ConfigError:
        vecenv.close()
        raise


def state(vecenv: Any) -> dict[str, Any] | None:
    """The statistics to save with a checkpoint, or None when the run normalises nothing."""
    return vecenv.state_dict() if isinstance(vecenv, VecNormalize) else None


def _describe(env: Any) -> str:
    space = (env.emulated or {}).get("emulated_observation_space") or env.single_observation_space
    return str(space)
