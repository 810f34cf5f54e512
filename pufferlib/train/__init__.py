"""PPO training and evaluation: `puffer train ENV`, `puffer eval ENV --checkpoint PATH`, and this API.

    import pufferlib.train
    summary = pufferlib.train.train("ocean/squared", {"train.total_timesteps": 200_000})
    summary["solved"], summary["mean_return"], summary["sps"]
    pufferlib.train.evaluate("ocean/squared", "checkpoints/.../model_000042.pt", episodes=100)

The summary dict holds at least env, steps, seconds, sps, mean_return and solved (see loop.learn).
Importing this package does not import torch; train() and evaluate() do.

The modules, one idea each: config (TOML defaults, overrides and the valid ranges), setup (vector
env, policy, device), memory (the rollout's layout and whether it fits), act (the act step shared by
rollouts and evaluation), ppo (rollouts, GAE, the update), loop (learn: the training loop),
checkpoint (save/load, which to keep), resume (the training state a checkpoint holds, continuing a
run directory), failure (how a failed run ends), evaluation, signals (SIGTERM/SIGHUP as Ctrl-C),
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

__all__ = ["ConfigError", "evaluate", "load_config", "train"]


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
    layers: defaults, env files, this file, overrides).
    resume: a run directory to continue (its config.toml, then `overrides`, e.g. a larger
    train.total_timesteps; its latest checkpoint); env_name may be None (the run's own).
    quiet=False shows the live dashboard on a terminal (unless dashboard=False) and a plain
    progress line every `progress_seconds` elsewhere. `on_update(progress)` is called after every update.
    checkpoint_dir: the older name, kept working: runs go to checkpoint_dir/{env}/{time}-{id}.

    An error inside the training loop is raised as failure.TrainingError, after the run was saved
    and its summary.json written (stop_reason "error").
    """
    from pufferlib.train import config as configuration
    from pufferlib.train import loop
    from pufferlib.train.run import failure, signals, tracking
    from pufferlib.train.scale import distributed

    overrides = _overrides(overrides, track)
    main = distributed.is_main()  # under torchrun: rank 0 alone writes the run directory and tracks
    env_name, cfg, checkpoint, directory = _configure(
        env_name, overrides, run_dir, checkpoint_dir, config_file, resume, main
    )
    tracking.require(cfg, directory is not None)  # a missing package fails before anything is written
    template = cfg
    if directory is not None:
        cfg = configuration.copy_config(cfg)
        cfg["train"]["run_dir"] = str(directory)  # checkpoints go here
    board, display = _display(main, quiet, dashboard, progress_seconds)
    opened = _Opened(directory, env_name, template, cfg, resuming=resume is not None)
    hooks = [hook for hook in (display, on_update) if hook is not None]
    hold = signals.Hold()
    summary: dict[str, Any] | None = None
    try:
        try:
            with board or contextlib.nullcontext():
                summary = loop.learn(
                    env_name, cfg, hooks, resume_from=checkpoint, prepare=opened.prepare, hold=hold
                )
        except failure.TrainingError as e:
            summary = e.summary
            raise
        finally:
            if summary is not None:
                summary["run_dir"] = None if directory is None else str(directory)
            opened.close(summary)
    finally:
        hold.release()  # a stop signal that came during the final save ends the run now
    return summary


def _overrides(overrides: dict[str, Any] | list[str] | None, track: str | Sequence[str]) -> dict[str, Any]:
    """The overrides as flat dotted keys (underscores for dashes), with each track= backend on."""
    from pufferlib.train import config as configuration
    from pufferlib.train.run import tracking

    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    overrides = configuration.flatten(dict(overrides or {}))
    overrides = {key.replace("-", "_"): value for key, value in overrides.items()}
    for backend in [track] if isinstance(track, str) else track:
        if backend not in tracking.EXTRAS:
            raise ConfigError(f"track={backend!r}: choose from {', '.join(tracking.EXTRAS)}")
        overrides[f"track.{backend}"] = True
    return overrides


def _configure(
    env_name: str | None,
    overrides: dict[str, Any],
    run_dir: str | Path | None,
    checkpoint_dir: str | Path | None,
    config_file: str | Path | None,
    resume: str | Path | None,
    main: bool,
) -> tuple[str, dict[str, Any], Path | None, Path | None]:
    """(env, config, the checkpoint to resume from or None, the run directory or None). resume=
    continues a run directory with its own config; a new run's directory is checked here, before
    anything is built (off rank 0 there is none, and no tracking)."""
    from pufferlib.train import config as configuration
    from pufferlib.train.run import resume as resuming
    from pufferlib.train.run import rundir

    if resume is not None:
        if run_dir is not None or checkpoint_dir is not None or "train.run_dir" in overrides:
            raise ConfigError("resume continues in the run's own directory: give no run_dir with it")
        if not main:
            raise ConfigError("resuming a distributed (torchrun) run is not supported yet")
        env_name, cfg, checkpoint = resuming.locate(resume, env_name, overrides)
        return env_name, cfg, checkpoint, Path(resume)
    if not env_name:
        raise ConfigError("give the environment (e.g. train('ocean/squared')), or resume= a run directory")
    if run_dir is None and checkpoint_dir is not None:
        run_dir = Path(checkpoint_dir) / "{env}" / "{time}-{id}"
    if run_dir is not None:
        overrides["train.run_dir"] = str(run_dir)
    overrides.setdefault("train.run_dir", "")
    cfg = load_config(env_name, overrides, config_file)
    if not main:
        cfg = configuration.copy_config(cfg)
        cfg["train"]["run_dir"] = ""
        cfg["track"].update(tensorboard=False, wandb=False, neptune=False)
    directory = rundir.path(cfg["train"]["run_dir"], env_name)
    if directory is not None:
        rundir.check(directory)  # refused before anything is built
    return env_name, cfg, None, directory


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


class _Opened:
    """What train() opens once the envs and the policy are built (loop.learn's `prepare`): the run
    directory (its lock) and the tracking; close() closes both after the run."""

    def __init__(
        self,
        directory: Path | None,
        env_name: str,
        template: dict[str, Any],
        cfg: dict[str, Any],
        resuming: bool = False,
    ):
        self.directory, self.env_name, self.template, self.cfg = directory, env_name, template, cfg
        self.resuming = resuming  # a run directory continued: with a checkpoint, or from the start
        self.lock: Any = None
        self.tracker: Any = None

    def prepare(self, resumed: dict[str, Any] | None) -> list:
        """Once the envs and the policy are built: take the run directory, open the tracking. A run
        resumed without a checkpoint (it saved none) starts again at update 0 in its directory."""
        from pufferlib.train.run import rundir, tracking

        if self.directory is not None and not self.resuming:
            self.lock = rundir.create(self.directory, self.env_name, self.template)
        elif self.directory is not None:
            self.lock = rundir.Lock(self.directory)
            rundir.remove_stale(self.directory)
            rundir.truncate_metrics(self.directory, 0 if resumed is None else int(resumed["update"]))
        step = (0 if self.resuming else None) if resumed is None else int(resumed["steps"])
        self.tracker = tracking.open_tracking(self.directory, self.env_name, self.cfg, step)
        return [self.tracker]

    def close(self, summary: dict[str, Any] | None) -> None:
        if self.tracker is not None:
            self.tracker.close(summary)
        if self.lock is not None:
            self.lock.release()


def __getattr__(name: str) -> Any:
    """`evaluate` is evaluation.evaluate, imported on first use (it imports torch)."""
    if name == "evaluate":
        from pufferlib.train.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
