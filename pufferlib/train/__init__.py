"""PPO training and evaluation: `puffer train ENV`, `puffer eval ENV --checkpoint PATH`, and this API.

    import pufferlib.train
    summary = pufferlib.train.train("ocean/squared", {"train.total_timesteps": 200_000})
    summary["solved"], summary["mean_return"], summary["sps"]
    pufferlib.train.evaluate("ocean/squared", "checkpoints/.../model_000042.pt", episodes=100)

The summary dict holds at least env, steps, seconds, sps, mean_return and solved (see ppo.train).
Importing this package does not import torch; train() and evaluate() do.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pufferlib.train.config import ConfigError
from pufferlib.train.config import load as load_config

__all__ = ["ConfigError", "evaluate", "load_config", "train"]


def train(
    env_name: str,
    overrides: dict[str, Any] | list[str] | None = None,
    *,
    quiet: bool = True,
    checkpoint_dir: str | Path | None = None,
    on_update: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train on `env_name` with its default config plus `overrides`; returns the summary dict.

    overrides: {"train.learning_rate": 3e-4, "vec.num_envs": 16} (or {"train": {...}}, or CLI tokens).
    quiet=False shows the live dashboard when stdout is a terminal. Checkpoints are written only
    when `checkpoint_dir` (or the override train.checkpoint_dir) is given; `puffer train` writes
    them to ./checkpoints by default. `on_update(progress)` is called after every update.
    """
    from pufferlib.train import config as configuration

    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    overrides = configuration.flatten(dict(overrides or {}))
    overrides = {key.replace("-", "_"): value for key, value in overrides.items()}
    overrides.setdefault("train.checkpoint_dir", "" if checkpoint_dir is None else str(checkpoint_dir))
    cfg = load_config(env_name, overrides)
    return run(env_name, cfg, dashboard=not quiet and sys.stdout.isatty(), on_update=on_update)


def run(
    env_name: str,
    cfg: dict[str, dict[str, Any]],
    dashboard: bool = False,
    on_update: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train with an already resolved config (what `puffer train` calls)."""
    from pufferlib.train import ppo

    if not dashboard:
        return ppo.train(env_name, cfg, on_update)
    from pufferlib.train.dashboard import Dashboard

    with Dashboard() as board:

        def both(progress: dict[str, Any]) -> None:
            board.update(progress)
            if on_update:
                on_update(progress)

        return ppo.train(env_name, cfg, both)


def evaluate(
    env_name: str,
    checkpoint: str | Path,
    episodes: int = 100,
    overrides: dict[str, Any] | list[str] | None = None,
    deterministic: bool = False,
) -> dict[str, Any]:
    """Mean return of a checkpoint's policy over `episodes` episodes (see checkpoint.evaluate)."""
    from pufferlib.train.checkpoint import evaluate as _evaluate

    return _evaluate(env_name, checkpoint, episodes, overrides, deterministic)
