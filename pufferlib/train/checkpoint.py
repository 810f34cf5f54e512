"""Checkpoints and evaluation: save a policy with the config that shaped it; load it and play.

A checkpoint is one `torch.save` dict: env name, the full resolved config, the policy's state
dict, steps and mean return at save time. It holds only tensors and plain Python values, so it
loads with `torch.load(weights_only=True)` (no pickled code runs).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Normal

import pufferlib
import pufferlib.environments as envs
from pufferlib.train import config as configuration
from pufferlib.train.config import Config, ConfigError


class CheckpointError(ValueError):
    """A file that is missing or is not a PufferLib checkpoint."""


def save(
    run_dir: Path, env_name: str, cfg: Config, policy: nn.Module, steps: int, update: int, mean_return
) -> Path:
    """Write `run_dir/model_<update>.pt` (atomically) and return its path."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / f"model_{update:06d}.pt"
    payload = {
        "env": env_name,
        "config": cfg,
        "state_dict": policy.state_dict(),
        "steps": steps,
        "update": update,
        "mean_return": mean_return,
        "pufferlib_version": pufferlib.__version__,
    }
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # never a half-written file under the final name
    return path


def load(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not exist (`puffer train` prints the path it saved)"
        )
    try:
        payload = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:
        raise CheckpointError(f"{path} is not a readable PufferLib checkpoint: {e}") from e
    if not isinstance(payload, dict) or not {"env", "config", "state_dict"} <= set(payload):
        raise CheckpointError(f"{path} is not a PufferLib checkpoint (expected env, config and state_dict)")
    return payload


def evaluate(
    env_name: str,
    checkpoint: str | Path,
    episodes: int = 100,
    overrides: dict[str, Any] | list[str] | None = None,
    deterministic: bool = False,
    timeout: float = 600.0,
) -> dict[str, Any]:
    """Run the checkpoint's policy for `episodes` episodes; returns the mean return and more.

    `deterministic` takes the most likely action instead of sampling (wrong for envs whose optimal
    policy is stochastic, e.g. ocean/stochastic). `overrides` change the checkpoint's config
    (e.g. {"vec.num_envs": 4}); sections that shape the policy must stay as trained.
    """
    from pufferlib.train.ppo import make_policy, make_vecenv, resolve_device

    if episodes < 1:
        raise ConfigError(f"episodes must be >= 1, got {episodes}")
    start = time.perf_counter()
    payload = load(checkpoint)
    if payload["env"] != env_name:
        raise ConfigError(
            f"checkpoint {checkpoint} was trained on {payload['env']}, not {env_name}; "
            f"run `puffer eval {payload['env']} --checkpoint {checkpoint}`"
        )
    cfg = configuration.copy_config(payload["config"])
    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    for dotted, value in configuration.flatten(overrides or {}).items():
        section, _, key = dotted.partition(".")
        configuration.set_value(cfg, section, key, value, source=f"--{dotted}")
    device = resolve_device(cfg["train"]["device"])
    binding = envs.get(env_name)

    vecenv = make_vecenv(binding, cfg)
    try:
        policy = make_policy(binding, vecenv.driver_env, cfg).to(device)
        try:
            policy.load_state_dict({k: v.to(device) for k, v in payload["state_dict"].items()})
        except RuntimeError as e:
            raise ConfigError(
                f"{checkpoint}: the weights do not fit the policy the config builds: {e}"
            ) from e
        policy.eval()
        returns, lengths, steps = _play(vecenv, policy, cfg, device, episodes, deterministic, start + timeout)
    finally:
        vecenv.close()
    mean = float(np.mean(returns))
    return {
        "env": env_name,
        "checkpoint": str(checkpoint),
        "episodes": len(returns),
        "mean_return": round(mean, 4),
        "std_return": round(float(np.std(returns)), 4),
        "mean_length": round(float(np.mean(lengths)), 2),
        "solved": bool(binding.solved is not None and mean >= binding.solved),
        "solved_score": binding.solved,
        "deterministic": deterministic,
        "steps": steps,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _play(vecenv, policy, cfg: Config, device: str, episodes: int, deterministic: bool, deadline: float):
    from pufferlib.frameworks.cleanrl import action_mask

    module = policy.policy
    recurrent = cfg["rnn"]["enabled"]
    resets_on_send = vecenv.driver_env.emulated is not None
    rows = int(vecenv.num_agents)
    state = None
    if recurrent:
        hidden = module.hidden_size
        state = (torch.zeros(rows, hidden, device=device), torch.zeros(rows, hidden, device=device))
        module_for_mask = module.policy
    else:
        module_for_mask = module
    last_done = np.ones(rows, dtype=bool)
    returns: list[float] = []
    lengths: list[float] = []
    steps = 0
    vecenv.async_reset(cfg["train"]["seed"])
    while len(returns) < episodes:
        if time.perf_counter() > deadline:
            raise TimeoutError(
                f"evaluation stopped after {steps} steps: {len(returns)} of {episodes} episodes finished "
                "before the timeout (does the env ever end an episode?)"
            )
        obs, _, terminals, truncations, infos, env_ids, masks = vecenv.recv()
        env_ids = np.asarray(env_ids, dtype=np.int64)
        done = np.asarray(terminals, dtype=bool) | np.asarray(truncations, dtype=bool)
        steps += int(np.asarray(masks).sum())
        for info in infos:
            if isinstance(info, dict) and "episode_return" in info:
                returns.append(float(info["episode_return"]))
                lengths.append(float(info.get("episode_length", 0)))
        obs_t = torch.as_tensor(obs).to(device)
        with torch.no_grad():
            if state is None:
                logits, _ = module(obs_t)
            else:
                ids = torch.as_tensor(env_ids, device=device)
                starts_np = last_done[env_ids] if resets_on_send else done
                starts = torch.as_tensor(starts_np, dtype=torch.float32, device=device)
                (logits, _), (h, c) = module(obs_t, (state[0][ids], state[1][ids]), starts)
                state[0][ids], state[1][ids] = h, c
            action = _act(logits, action_mask(module_for_mask, obs_t), deterministic)
        last_done[env_ids] = done
        vecenv.send(action.cpu().numpy())
    return returns[:episodes], lengths[:episodes], steps


def _act(logits, mask: torch.Tensor | None, deterministic: bool) -> torch.Tensor:
    """Sample (as in training) or take the most likely action; masked actions are never chosen."""
    from pufferlib.frameworks.cleanrl import sample_logits

    if not deterministic:
        return sample_logits(logits, None, mask)[0]
    if isinstance(logits, Normal):
        return logits.mean
    if isinstance(logits, torch.Tensor):
        return (logits if mask is None else logits.masked_fill(mask == 0, float("-inf"))).argmax(-1)
    masks = [None] * len(logits) if mask is None else mask.split([lg.shape[-1] for lg in logits], -1)
    picks = [
        lg if m is None else lg.masked_fill(m == 0, float("-inf"))
        for lg, m in zip(logits, masks, strict=True)
    ]
    return torch.stack([lg.argmax(-1) for lg in picks], dim=-1)
