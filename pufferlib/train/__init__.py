"""PPO training and evaluation: `puffer train ENV`, `puffer eval ENV --checkpoint PATH`, and this API.

    import pufferlib.train
    summary = pufferlib.train.train("ocean/squared", {"train.total_timesteps": 200_000})
    summary["solved"], summary["mean_return"], summary["sps"]
    pufferlib.train.evaluate("ocean/squared", "checkpoints/.../model_000042.pt", episodes=100)

The summary dict holds at least env, steps, seconds, sps, mean_return and solved (see ppo.learn).
Importing this package does not import torch; train() and evaluate() do.

The modules, one idea each: config (TOML defaults and overrides), setup (vector env, policy,
device), act (the act step shared by rollouts and evaluation), ppo (rollouts, GAE, the update and
the loop), checkpoint (save/load), evaluation, signals (SIGTERM/SIGHUP as Ctrl-C), dashboard.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pufferlib.train.config import ConfigError
from pufferlib.train.config import load as load_config

if TYPE_CHECKING:
    from pufferlib.train.evaluation import evaluate

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
    from pufferlib.train import distributed, ppo

    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    overrides = configuration.flatten(dict(overrides or {}))
    overrides = {key.replace("-", "_"): value for key, value in overrides.items()}
    overrides.setdefault("train.checkpoint_dir", "" if checkpoint_dir is None else str(checkpoint_dir))
    cfg = load_config(env_name, overrides)
    hooks = [on_update] if on_update else []
    if quiet or not sys.stdout.isatty() or not distributed.is_main():  # under torchrun: rank 0's
        return ppo.learn(env_name, cfg, hooks)
    from pufferlib.train.dashboard import Dashboard

    with Dashboard() as board:
        return ppo.learn(env_name, cfg, [board.update, *hooks])


def __getattr__(name: str) -> Any:
    """`evaluate` is evaluation.evaluate, imported on first use (it imports torch)."""
    if name == "evaluate":
        from pufferlib.train.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
