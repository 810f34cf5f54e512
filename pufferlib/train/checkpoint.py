"""Checkpoints: save a policy with the config that shaped it; load it back. Nothing else.

A checkpoint is one `torch.save` dict: env name, the full resolved config, the policy's state
dict, steps and mean return at save time, and the observation/reward normalisation statistics
(`normalize`) when the run kept them (train/normalize.py). It holds only tensors and plain Python
values, so it loads with `torch.load(weights_only=True)` (no pickled code runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

import pufferlib
from pufferlib.train.config import Config


class CheckpointError(ValueError):
    """A file that is missing or is not a PufferLib checkpoint."""


def save(
    run_dir: Path,
    env_name: str,
    cfg: Config,
    policy: nn.Module,
    steps: int,
    update: int,
    mean_return,
    normalize: dict[str, Any] | None = None,
) -> Path:
    """Write `run_dir/model_<update>.pt` (atomically) and return its path. `normalize`: the run's
    normalisation statistics (normalize.state), which the policy needs to act as it was trained."""
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
    if normalize is not None:
        payload["normalize"] = normalize
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # never a half-written file under the final name
    return path


def load(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """The checkpoint's dict (env, config, state_dict, steps, ...); CheckpointError if it is not one."""
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
