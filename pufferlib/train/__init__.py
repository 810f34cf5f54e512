"""PPO training and evaluation: `puffer train ENV`, `puffer eval ENV --checkpoint PATH`, and this API.

    import pufferlib.train
    summary = pufferlib.train.train("ocean/squared", {"train.total_timesteps": 200_000})
    summary["solved"], summary["mean_return"], summary["sps"]
    pufferlib.train.evaluate("ocean/squared", "checkpoints/.../model_000042.pt", episodes=100)

The summary dict holds at least env, steps, seconds, sps, mean_return and solved (see ppo.learn).
Importing this package does not import torch; train() and evaluate() do.

The modules, one idea each: config (TOML defaults, overrides and the valid ranges), setup (vector
env, policy, device), memory (the rollout's layout and whether it fits), act (the act step shared by
rollouts and evaluation), ppo (rollouts, GAE, the update and the loop), checkpoint (save/load),
evaluation, signals (SIGTERM/SIGHUP as Ctrl-C), dashboard (the live view and the plain progress
lines), rundir (a run's directory), tracking (metrics.jsonl, TensorBoard, W&B, Neptune: the per-
update hook).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
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
    dashboard: bool = True,
    run_dir: str | Path | None = None,
    track: str | Sequence[str] = (),
    config_file: str | Path | None = None,
    on_update: Callable[[dict[str, Any]], None] | None = None,
    progress_seconds: float = 10.0,
    checkpoint_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Train on `env_name` with its default config plus `overrides`; returns the summary dict.

    overrides: {"train.learning_rate": 3e-4, "vec.num_envs": 16} (or {"train": {...}}, or CLI tokens).
    run_dir: where this run leaves config.toml, metrics.jsonl, TensorBoard events, checkpoints and
    summary.json: a path, or a template with {env}, {time} and {id} ("runs/{env}/{time}-{id}" is
    `puffer train`'s). None (the default here) writes nothing unless the override train.run_dir
    names one. A sweep gives each trial its own. track: "wandb" and/or "neptune" (TensorBoard is on
    whenever there is a run directory; [track] in the config says the same). config_file: a
    config.toml to start from (the layers: defaults, env files, this file, overrides).
    quiet=False shows the live dashboard on a terminal (unless dashboard=False) and a plain
    progress line every `progress_seconds` elsewhere. `on_update(progress)` is called after every update.
    checkpoint_dir: the older name, kept working: runs go to checkpoint_dir/{env}/{time}-{id}.
    """
    from pufferlib.train import config as configuration
    from pufferlib.train import distributed, ppo, rundir, tracking

    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    overrides = configuration.flatten(dict(overrides or {}))
    overrides = {key.replace("-", "_"): value for key, value in overrides.items()}
    if run_dir is None and checkpoint_dir is not None:
        run_dir = Path(checkpoint_dir) / "{env}" / "{time}-{id}"
    if run_dir is not None:
        overrides["train.run_dir"] = str(run_dir)
    overrides.setdefault("train.run_dir", "")
    for backend in [track] if isinstance(track, str) else track:
        if backend not in tracking.EXTRAS:
            raise ConfigError(f"track={backend!r}: choose from {', '.join(tracking.EXTRAS)}")
        overrides[f"track.{backend}"] = True
    cfg = load_config(env_name, overrides, config_file)
    main = distributed.is_main()  # under torchrun: rank 0 alone writes the run directory and tracks
    if not main:
        cfg = configuration.copy_config(cfg)
        cfg["train"]["run_dir"] = ""
        cfg["track"].update(tensorboard=False, wandb=False, neptune=False)
    directory = rundir.path(cfg["train"]["run_dir"], env_name)
    tracking.require(cfg, directory is not None)  # a missing package fails before anything is written
    if directory is not None:
        rundir.create(directory, env_name, cfg)
        cfg = configuration.copy_config(cfg)
        cfg["train"]["run_dir"] = str(directory)  # checkpoints go here
    board = display = None
    if main and not quiet and dashboard and sys.stdout.isatty():
        from pufferlib.train.dashboard import Dashboard

        board = Dashboard()
        display = board.update
    elif main and not quiet:
        from pufferlib.train.dashboard import ProgressLines

        display = ProgressLines(progress_seconds)
    tracker = tracking.open_tracking(directory, env_name, cfg)
    hooks = [hook for hook in (display, tracker, on_update) if hook is not None]
    try:
        with board or contextlib.nullcontext():
            summary = ppo.learn(env_name, cfg, hooks)
    except BaseException:
        tracker.close(None)
        raise
    summary["run_dir"] = None if directory is None else str(directory)
    tracker.close(summary)
    return summary


def __getattr__(name: str) -> Any:
    """`evaluate` is evaluation.evaluate, imported on first use (it imports torch)."""
    if name == "evaluate":
        from pufferlib.train.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
