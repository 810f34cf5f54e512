"""PPO training and evaluation: `puffer train ENV`, `puffer eval ENV --checkpoint PATH`, and this API.

    import pufferlib.train
    summary = pufferlib.train.train("ocean/squared", {"train.total_timesteps": 200_000})
    summary["solved"], summary["mean_return"], summary["sps"]
    pufferlib.train.evaluate("ocean/squared", "checkpoints/.../model_000042.pt", episodes=100)

The summary dict holds at least env, steps, seconds, sps, mean_return and solved (see loop.learn).
`puffer train` and train() resolve their arguments once, into a spec.RunSpec that loop.learn trains.
Importing this package does not import torch; train() and evaluate() do.

The modules, one idea each: config (TOML defaults, overrides and the valid ranges), spec (one run,
resolved once: env, config, run directory, the checkpoint a resume continues), setup (vector
env, policy, device), memory (the rollout's layout and whether it fits), act (the act step shared by
rollouts and evaluation), ppo (rollouts, GAE, the update), loop (learn: the training loop),
checkpoint (save/load, which to keep), resume (the training state a checkpoint holds, put back
into a new run), failure (how a failed run ends), evaluation, signals (SIGTERM/SIGHUP as Ctrl-C),
dashboard (the live view and the plain progress lines), rundir (a run's directory), tracking
(metrics.jsonl, TensorBoard, W&B, Neptune: the per-update hook).
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
    from pufferlib.train.spec import RunSpec

__all__ = ["ConfigError", "evaluate", "load_config", "train", "train_spec"]


def train(
    env_name: str | None,
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
    resume: str | Path | None = None,
) -> dict[str, Any]:
    """Train on `env_name` with its default config plus `overrides`; returns the summary dict.

    overrides: {"train.learning_rate": 3e-4, "vec.num_envs": 16} (or {"train": {...}}, or CLI tokens).
    run_dir: where this run leaves config.toml, metrics.jsonl, TensorBoard events, checkpoints and
    summary.json: a path, or a template with {env}, {time} and {id} ("runs/{env}/{time}-{id}" is
    `puffer train`'s). None (the default here) writes nothing unless the override train.run_dir
    names one. A sweep gives each trial its own. The directory is made only once the envs and the
    policy are built. track: "wandb" and/or "neptune" (TensorBoard is on whenever there is a run
    directory; [track] in the config says the same). config_file: a config.toml to start from (the
    layers: defaults, env files, this file, overrides); env_name may then be None (the file's).
    resume: a run directory to continue (its config.toml, then `overrides`, e.g. a larger
    train.total_timesteps; its latest checkpoint); env_name may be None (the run's own).
    quiet=False shows the live dashboard on a terminal (unless dashboard=False) and a plain
    progress line every `progress_seconds` elsewhere. `on_update(progress)` is called after every update.
    checkpoint_dir: the older name, kept working: runs go to checkpoint_dir/{env}/{time}-{id}.

    An error inside the training loop is raised as failure.TrainingError, after the run was saved
    and its summary.json written (stop_reason "error").
    """
    from pufferlib.train.spec import RunSpec, flat_overrides

    overrides = flat_overrides(overrides, track)
    if run_dir is None and checkpoint_dir is not None:
        run_dir = Path(checkpoint_dir) / "{env}" / "{time}-{id}"
    if run_dir is None and resume is None:
        overrides.setdefault("train.run_dir", "")  # the API writes nothing unless asked
    spec = RunSpec.build(env_name, overrides, config_file=config_file, run_dir=run_dir, resume=resume)
    return train_spec(
        spec, quiet=quiet, dashboard=dashboard, on_update=on_update, progress_seconds=progress_seconds
    )


def train_spec(
    spec: RunSpec,
    *,
    quiet: bool = True,
    dashboard: bool = True,
    on_update: Callable[[dict[str, Any]], None] | None = None,
    progress_seconds: float = 10.0,
) -> dict[str, Any]:
    """train() of a RunSpec already built (`puffer train` builds it from its arguments): the same
    summary, display and hook."""
    from pufferlib.train import loop
    from pufferlib.train.scale import distributed

    board, display = _display(distributed.is_main(), quiet, dashboard, progress_seconds)
    hooks = [hook for hook in (display, on_update) if hook is not None]
    with board or contextlib.nullcontext():
        return loop.learn(spec, hooks)


def _display(main: bool, quiet: bool, dashboard: bool, progress_seconds: float) -> tuple[Any, Any]:
    """(the live dashboard, a context manager, or None; the display hook, or None): the dashboard
    on a terminal, plain progress lines elsewhere, nothing when quiet or off rank 0."""
    if main and not quiet and dashboard and sys.stdout.isatty():
        from pufferlib.train.run.dashboard import Dashboard

        board = Dashboard()
        return board, board.update
    if main and not quiet:
        from pufferlib.train.run.dashboard import ProgressLines

        return None, ProgressLines(progress_seconds)
    return None, None


def __getattr__(name: str) -> Any:
    """`evaluate` is evaluation.evaluate, imported on first use (it imports torch)."""
    if name == "evaluate":
        from pufferlib.train.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
