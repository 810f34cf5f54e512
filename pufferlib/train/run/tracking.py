"""Experiment tracking: each update's metrics to metrics.jsonl, TensorBoard, W&B and Neptune.

One small interface, `Backend` (`log(step, metrics)`, `finish(summary, checkpoint)`), and `Tracking`,
the trainer's per-update hook that fans each update out to the backends the `[track]` section
turns on. The libraries researchers already use do the work: torch's TensorBoard SummaryWriter,
`wandb`, `neptune`; only metrics.jsonl is written here, one JSON object per line.

The metric names are CleanRL's (`charts/episodic_return`, `losses/value_loss`, ...), with the
global step (agent steps) as the x axis, so dashboards and habits carry over. metrics.jsonl keeps
the plain names (`episodic_return`, `value_loss`, ...) and adds `update`, `global_step` and `time`
(seconds since train() began).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import math
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pufferlib.train.config import Config

# plain name (metrics.jsonl) -> CleanRL's name (TensorBoard, W&B, Neptune). Env stats are env/<key>.
NAMES = {
    "episodic_return": "charts/episodic_return",  # mean over the last train.solve_window episodes
    "episodic_length": "charts/episodic_length",
    "episodes": "charts/episodes",
    "sps": "charts/SPS",  # whole run so far: global_step / time, as CleanRL's
    "sps_update": "charts/SPS_update",  # the latest update alone (what the dashboard shows)
    "learning_rate": "charts/learning_rate",
    "policy_loss": "losses/policy_loss",
    "value_loss": "losses/value_loss",
    "entropy": "losses/entropy",
    "approx_kl": "losses/approx_kl",
    "clipfrac": "losses/clipfrac",
    "explained_variance": "losses/explained_variance",
}
EXTRAS = {"wandb": "wandb", "neptune": "neptune"}  # backend -> the pufferlib extra that installs it
TENSORBOARD_MISSING = (
    "TensorBoard logging needs the tensorboard package: pip install 'pufferlib[train]' "
    "(or turn it off: --track.tensorboard false)"
)


class TrackingError(ValueError):
    """A tracking backend was asked for but cannot run (its package is missing); says what to install."""


class Backend(Protocol):
    def log(self, step: int, metrics: dict[str, float]) -> None: ...

    def finish(self, summary: dict[str, Any] | None, checkpoint: Path | None) -> None: ...


def record(progress: dict[str, Any]) -> dict[str, Any]:
    """One metrics.jsonl line from the trainer's progress dict (loop.progress). Values that are not
    known yet (no episode ended, no loss before the first update) are null."""
    elapsed = progress["elapsed"]
    out: dict[str, Any] = {
        "update": progress["update"],
        "global_step": progress["steps"],
        "time": round(elapsed, 4),
        "sps": progress["steps"] / elapsed if elapsed > 0 else None,
        "sps_update": progress["sps"],
        "episodes": progress["episodes"],
        "episodic_return": progress["mean_return"],
        "episodic_length": progress["mean_length"],
        "learning_rate": progress.get("learning_rate"),
    }
    for name in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"):
        out[name] = progress["losses"].get(name)
    out.update({f"env/{key}": value for key, value in progress["env_stats"].items()})
    return {key: _finite(value) for key, value in out.items()}


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN (explained variance of constant returns)
    return value


def scalars(line: dict[str, Any]) -> dict[str, float]:
    """The CleanRL-named scalars of a record (what TensorBoard, W&B and Neptune get)."""
    out = {}
    for key, value in line.items():
        name = NAMES.get(key, key if key.startswith("env/") else None)
        if name is not None and value is not None:
            out[name] = float(value)
    return out


class Tracking:
    """The per-update hook: `tracking(progress)` sends the update to every backend; `close(summary)`
    writes summary.json and ends each backend (W&B and Neptune get the final checkpoint)."""

    def __init__(self, directory: Path | None, backends: list[Backend], video: Any = None) -> None:
        self.directory = directory
        self.backends = backends
        self.jsonl = directory / "metrics.jsonl" if directory else None
        self.video = video  # video_hook.VideoHook (train.video_interval), or None

    def __call__(self, progress: dict[str, Any]) -> None:
        line = record(progress)
        if self.jsonl is not None:  # opened per line: readable while the run goes on, nothing held open
            with open(self.jsonl, "a") as f:
                f.write(json.dumps(line) + "\n")
        values = scalars(line)
        for backend in self.backends:
            backend.log(line["global_step"], values)
        if self.video is not None:
            self.video(progress)

    def close(self, summary: dict[str, Any] | None) -> None:
        """End every backend; summary None means the run failed (W&B marks it so). A backend that
        fails here is reported on stderr, never raised: the run itself is done and saved."""
        errors = []
        if self.video is not None:
            self.video.close()
            self.video = None
        if summary is not None and self.directory is not None:
            from pufferlib.train.run.rundir import write_summary

            try:
                write_summary(self.directory, summary)
            except OSError as e:  # a deleted folder, a full disk: the caller still gets the summary
                errors.append(("summary.json", e))
        checkpoint = Path(summary["checkpoint"]) if summary and summary.get("checkpoint") else None
        for backend in self.backends:
            try:
                backend.finish(summary, checkpoint)
            except Exception as e:  # one backend's failure must not lose the others' data
                errors.append((type(backend).__name__, e))
        self.backends = []
        failed = summary is not None and summary.get("stop_reason") == "error"
        for what, error in errors:  # after training: say so, and keep the summary the caller is owed
            if failed and isinstance(error, OSError):  # the run's own error (a full disk, the run
                continue  # directory deleted) says it, in its one line
            print(f"pufferlib: tracking could not finish: {what}: {error}", file=sys.stderr)


def open_tracking(
    directory: Path | None, env_name: str, cfg: Config, resume_step: int | None = None
) -> Tracking:
    """The Tracking hook for a run: metrics.jsonl and TensorBoard in `directory` (when there is one),
    and W&B / Neptune when `[track]` turns them on. A missing package is a TrackingError naming the
    extra to install, raised before training starts. `resume_step`: the run continues after this
    global step (puffer train --resume): TensorBoard writes into the same directory and drops what
    the earlier session logged after that step; W&B logs to the same run (its id is in the run
    directory); metrics.jsonl is appended to (rundir.truncate_metrics cut it first)."""
    track = cfg["track"]
    name = f"{env_name.replace('/', '-')}-{directory.name}" if directory else env_name.replace("/", "-")
    backends: list[Backend] = []
    try:
        if directory is not None and track["tensorboard"]:
            backends.append(TensorBoard(directory, cfg, resume_step))
        if track["wandb"]:
            backends.append(WandB(directory, env_name, name, cfg))
        if track["neptune"]:
            backends.append(Neptune(env_name, name, cfg))
        video = None
        if directory is not None and cfg["train"].get("video_interval"):
            from pufferlib.train.run.video_hook import VideoHook

            video = VideoHook(directory, env_name, cfg, backends)
    except BaseException:
        for backend in backends:
            backend.finish(None, None)
        raise
    return Tracking(directory, backends, video)


def require(cfg: Config, has_directory: bool) -> None:
    """Raise TrackingError, naming the extra to install, if a backend `cfg` turns on cannot run."""
    track = cfg["track"]
    if has_directory and track["tensorboard"] and importlib.util.find_spec("tensorboard") is None:
        raise TrackingError(TENSORBOARD_MISSING)
    for backend in EXTRAS:
        if track[backend]:
            _require(backend, backend)


def _require(module: str, backend: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise TrackingError(
            f"--track {backend} needs the {module} package: pip install 'pufferlib[{EXTRAS[backend]}]'"
        ) from None


def _flat(cfg: Config) -> dict[str, Any]:
    """{"train.learning_rate": 0.001, ...}: one level, as W&B's and Neptune's config views like it."""
    return {f"{section}.{key}": value for section, values in cfg.items() for key, value in values.items()}


class TensorBoard:
    """Event files in the run directory through torch's SummaryWriter, as CleanRL writes them."""

    def __init__(self, directory: Path, cfg: Config, resume_step: int | None = None) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # torch raises ImportError (not ModuleNotFoundError) without tensorboard
            raise TrackingError(TENSORBOARD_MISSING) from None
        purge = None if resume_step is None else resume_step + 1
        self.writer = SummaryWriter(log_dir=str(directory), flush_secs=10, purge_step=purge)
        self.excepthook = threading.excepthook
        threading.excepthook = _quiet_writer_thread(self.excepthook)
        if resume_step is not None:
            return  # the hyperparameters are in the first session's events
        table = "\n".join(f"|{key}|{value}|" for key, value in _flat(cfg).items())
        self.writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")

    def log(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self.writer.add_scalar(name, value, step)

    def video(self, step: int, path: Path, frames: list, fps: int) -> None:
        """An animated GIF image summary, as SummaryWriter.add_video writes (it needs moviepy)."""
        from tensorboard.compat.proto.summary_pb2 import Summary

        from pufferlib.train.run.video import TAG, gif_bytes

        height, width = frames[0].shape[:2]
        image = Summary.Image(
            height=height, width=width, colorspace=3, encoded_image_string=gif_bytes(frames, fps)
        )
        self.writer._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=TAG, image=image)]), step)

    def finish(self, summary: dict[str, Any] | None, checkpoint: Path | None) -> None:
        try:
            self.writer.close()  # raises what the writer thread failed with, if it did
        finally:
            threading.excepthook = self.excepthook


def _quiet_writer_thread(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """threading.excepthook, silent for TensorBoard's event-writer thread: what fails it (a full disk)
    is raised again by the writer's next write or its close, where the run reports it in one line."""

    def excepthook(args: Any) -> None:
        if type(args.thread).__name__ != "_AsyncWriterThread":
            hook(args)

    return excepthook


class WandB:
    """A W&B run: the config, every update, and the final checkpoint as a `model` artifact. Offline
    (WANDB_MODE=offline) it writes into the run directory's wandb/, for `wandb sync` later."""

    def __init__(self, directory: Path | None, env_name: str, name: str, cfg: Config) -> None:
        from pufferlib.train.run.rundir import wandb_id

        wandb = _require("wandb", "wandb")
        track = cfg["track"]
        self.wandb = wandb
        # the id lives in the run directory, so `puffer train --resume` logs to the same W&B run
        run_id = wandb_id(directory) if directory else None
        self.run = wandb.init(
            id=run_id,
            resume="allow" if run_id else None,
            project=track["project"] or None,
            entity=track["entity"] or None,
            name=name,
            group=env_name,
            job_type="train",
            config=_flat(cfg),
            dir=str(directory) if directory else None,
            settings=wandb.Settings(console="off", silent=True),
        )

    def log(self, step: int, metrics: dict[str, float]) -> None:
        self.run.log({**metrics, "global_step": step}, step=step)

    def video(self, step: int, path: Path, frames: list, fps: int) -> None:
        from pufferlib.train.run.video import TAG

        self.run.log({TAG: self.wandb.Video(str(path), fps=fps, format=path.suffix[1:])}, step=step)

    def finish(self, summary: dict[str, Any] | None, checkpoint: Path | None) -> None:
        if checkpoint is not None and checkpoint.is_file():
            artifact = self.wandb.Artifact(f"model-{self.run.id}", type="model")
            artifact.add_file(str(checkpoint))
            self.run.log_artifact(artifact)
        if summary:
            self.run.summary.update({k: v for k, v in summary.items() if isinstance(v, int | float | str)})
        failed = summary is None or summary.get("stop_reason") == "error"
        self.run.finish(exit_code=1 if failed else 0)


class Neptune:
    """A Neptune run: the config, every update, and the final checkpoint uploaded. NEPTUNE_MODE=offline
    stores it locally (`neptune sync` later); debug keeps nothing; the API token comes from
    NEPTUNE_API_TOKEN, never from the config."""

    def __init__(self, env_name: str, name: str, cfg: Config) -> None:
        neptune = _require("neptune", "neptune")
        from neptune.utils import stringify_unsupported

        _to_stderr(logging.getLogger("neptune"), logging.getLogger("neptune_no_prefix"))

        project = cfg["track"]["project"]
        self.stringify = stringify_unsupported
        self.run = neptune.init_run(
            project=project if "/" in project else None,  # else NEPTUNE_PROJECT
            name=name,
            tags=[env_name],
            capture_stdout=False,
            capture_stderr=False,
            capture_hardware_metrics=False,
            capture_traceback=False,
            git_ref=False,
            source_files=[],
        )
        self.run["config"] = stringify_unsupported(cfg)

    def log(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self.run[name].append(value, step=step)

    def finish(self, summary: dict[str, Any] | None, checkpoint: Path | None) -> None:
        if checkpoint is not None and checkpoint.is_file():
            self.run["model/checkpoint"].upload(str(checkpoint), wait=True)
        if summary:
            self.run["summary"] = self.stringify(summary)
        self.run.stop()


def _to_stderr(*loggers: logging.Logger) -> None:
    """Neptune logs to stdout; ours is the summary's (`--json` promises nothing else there)."""
    for logger in loggers:
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
                logger.removeHandler(handler)
                moved = logging.StreamHandler(sys.stderr)
                moved.setFormatter(handler.formatter)
                logger.addHandler(moved)
