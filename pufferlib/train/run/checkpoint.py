"""Checkpoints: save a run's state with the config that shaped it; load it back; keep a few.

A checkpoint is one `torch.save` dict:

    env, config          the env name and the fully resolved config
    state_dict           the policy's weights
    steps, update        global agent steps and updates at save time
    mean_return          the mean return of the last train.solve_window episodes (None before)
    normalize            observation/reward normalisation statistics (train/normalize.py), if kept
    resume               what `puffer train --resume` needs beyond the weights (train/resume.py):
                         optimizer state, learning rate, elapsed seconds, episode statistics,
                         RNG states (torch, numpy) and the env seed of the next rollout

It holds only tensors and plain Python values, so it loads with `torch.load(weights_only=True)`
(no pickled code runs). Checkpoints written before `resume` existed hold the weights alone: they
still load (`puffer eval`), but a run cannot resume from them.

`Saver` decides when to save (every train.checkpoint_minutes, every train.checkpoint_interval
updates, and at the end) and which to keep: the last train.keep_checkpoints plus the best by mean
return. A save that fails (disk full, a folder deleted or unwritable) raises CheckpointSaveError,
one line naming the folder and its free space, and leaves no partial file behind.
"""

from __future__ import annotations

import contextlib
import io
import pickle
import re
import shutil
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

import pufferlib
from pufferlib.train.config import Config

PATTERN = re.compile(r"model_(\d+)\.pt")


class CheckpointError(ValueError):
    """A file that is missing or is not a PufferLib checkpoint."""


class CheckpointSaveError(OSError):
    """A checkpoint could not be written; the message names the folder and its free space."""


def name(update: int) -> str:
    return f"model_{update:06d}.pt"


def save(
    run_dir: Path,
    env_name: str,
    cfg: Config,
    policy: nn.Module,
    steps: int,
    update: int,
    mean_return,
    normalize: dict[str, Any] | None = None,
    resume: dict[str, Any] | None = None,
) -> Path:
    """Write `run_dir/model_<update>.pt` (atomically: write then rename) and return its path.
    `normalize`: the run's normalisation statistics (normalize.state), which the policy needs to act
    as it was trained; `resume`: the training state of resume.snapshot. `run_dir` must exist."""
    path = run_dir / name(update)
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
    if resume is not None:
        payload["resume"] = resume
    data = io.BytesIO()  # serialised first: a failed write is then Python's OSError, with its errno
    torch.save(payload, data)
    tmp = path.with_suffix(".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data.getbuffer())
        tmp.replace(path)  # never a half-written file under the final name
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise CheckpointSaveError(save_failure(run_dir, e)) from None
    return path


def save_failure(folder: Path, error: BaseException) -> str:
    """One line: the checkpoint could not be written into `folder`, why, and the free space there."""
    text = str(error).strip()
    reason = getattr(error, "strerror", None) or (text.splitlines()[0] if text else type(error).__name__)
    if not folder.is_dir():
        return f"cannot save a checkpoint in {folder}: the folder no longer exists"
    return f"cannot save a checkpoint in {folder}: {reason} ({free_space(folder)} free there)"


def free_space(folder: Path) -> str:
    """The free space of the file system holding `folder` (or its nearest existing parent)."""
    for candidate in (folder, *folder.absolute().parents):
        try:
            free = shutil.disk_usage(candidate).free
        except OSError:
            continue
        for unit in ("B", "KiB", "MiB", "GiB"):
            if free < 1024 or unit == "GiB":
                return f"{free:.0f} {unit}" if unit == "B" else f"{free:.1f} {unit}"
            free /= 1024
    return "unknown"


def load(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """The checkpoint's dict (env, config, state_dict, steps, ...); CheckpointError if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not exist (`puffer train` prints the path it saved)"
        )
    try:
        payload = torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as e:  # torch's text suggests weights_only=False: never here
        found = re.search(r"GLOBAL ([\w.]+)", str(e))  # the callable or class it would have loaded
        what = f" ({found.group(1)})" if found else ""
        raise CheckpointError(
            f"{path} was not loaded: it holds pickled Python objects{what}, which a PufferLib checkpoint "
            "never does (only tensors and plain values) and which could run code when unpickled"
        ) from e
    except Exception as e:
        lines = str(e).strip().splitlines()
        why = f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
        raise CheckpointError(f"{path} is not a readable PufferLib checkpoint ({why})") from e
    if not isinstance(payload, dict) or not {"env", "config", "state_dict"} <= set(payload):
        raise CheckpointError(f"{path} is not a PufferLib checkpoint (expected env, config and state_dict)")
    _check_types(path, payload)
    for key, tensor in payload["state_dict"].items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(
                f"{path} holds weights that are not finite numbers (NaN or infinite, first in {key!r}): a "
                "policy that diverged; use an earlier checkpoint of the run"
            )
    return payload


def _check_types(path: Path, payload: dict[str, Any]) -> None:
    """CheckpointError naming the first entry whose type is not what `save` writes."""
    config, weights = payload["config"], payload["state_dict"]
    if not isinstance(payload["env"], str):
        wrong = ("env", "a string (the env name)", payload["env"])
    elif not isinstance(config, dict) or not all(isinstance(v, dict) for v in config.values()):
        wrong = ("config", "a dict of config sections", config)
    elif not isinstance(weights, dict) or not all(isinstance(v, torch.Tensor) for v in weights.values()):
        wrong = ("state_dict", "a dict of tensors (the policy's weights)", weights)
    elif "resume" in payload and not isinstance(payload["resume"], dict):
        wrong = ("resume", "a dict (the training state)", payload["resume"])
    else:
        return
    key, expected, value = wrong
    raise CheckpointError(
        f"{path} is not a PufferLib checkpoint: its {key!r} should be {expected}, not {type(value).__name__}"
    )


def listed(run_dir: Path) -> list[Path]:
    """The checkpoints in `run_dir`, oldest (lowest update) first."""
    found = [(int(m.group(1)), p) for p in run_dir.glob("model_*.pt") if (m := PATTERN.fullmatch(p.name))]
    return [p for _, p in sorted(found)]


class Saver:
    """When to save and what to keep, for one run directory.

    `due(update)`: a periodic save is due (train.checkpoint_minutes since the last save, or every
    train.checkpoint_interval updates). `saved(path, mean_return)` records a save and deletes the
    checkpoints beyond the last `keep` (0 keeps all), never the best by mean return.
    """

    def __init__(self, run_dir: Path, cfg: Config, loaded: dict[str, Any] | None = None) -> None:
        """`loaded`: a checkpoint of `run_dir` already loaded (the one a resume continues from, its
        file in "path"), read from there rather than loaded again."""
        tc = cfg["train"]
        self.run_dir = run_dir
        self.interval = tc["checkpoint_interval"]
        self.seconds = 60.0 * tc["checkpoint_minutes"]
        self.keep = tc["keep_checkpoints"]
        self.last_save = time.monotonic()
        self.best: tuple[float, Path] | None = None
        self.history: list[Path] = listed(run_dir)  # a resumed run keeps pruning its own
        known = {} if loaded is None else {Path(loaded["path"]): loaded}
        for path in self.history:
            with contextlib.suppress(CheckpointError, OSError):
                self._consider((known.get(path) or load(path)).get("mean_return"), path)

    def due(self, update: int) -> bool:
        if self.interval and update % self.interval == 0:
            return True
        return bool(self.seconds) and time.monotonic() - self.last_save >= self.seconds

    def saved(self, path: Path, mean_return: float | None) -> None:
        self.last_save = time.monotonic()
        if path in self.history:
            self.history.remove(path)
        self.history.append(path)
        self._consider(mean_return, path)
        if not self.keep:
            return
        best = self.best[1] if self.best else None
        for old in self.history[: -self.keep]:
            if old != best:
                with contextlib.suppress(OSError):
                    old.unlink(missing_ok=True)
        self.history = [p for p in self.history[: -self.keep] if p == best] + self.history[-self.keep :]

    def _consider(self, mean_return: float | None, path: Path) -> None:
        if isinstance(mean_return, int | float) and (self.best is None or mean_return > self.best[0]):
            self.best = (float(mean_return), path)
