"""Run directories: where one training run leaves everything it made.

    runs/ocean/squared/20261201-120000-3f9a1c/
        config.toml      the fully resolved config (`puffer train --config` loads it back)
        metrics.jsonl    one line per update (tracking.py)
        events.out.tfevents.*   TensorBoard (CleanRL's metric names)
        model_000012.pt  checkpoints (checkpoint.py)
        summary.json     what `train()` returned
        wandb/           W&B's files when --track wandb (offline runs: `wandb sync` them)

`train.run_dir` is a template: `{env}` (the binding's name, e.g. ocean/squared), `{time}` (local
time, YYYYmmdd-HHMMSS) and `{id}` (6 random hex digits) are filled in; a path without them is used
as it is, so a caller (a sweep trial) can choose each run's directory. "" means no run directory:
nothing is written. A directory that already holds a run is refused: nothing is overwritten.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from pufferlib.train.config import Config, ConfigError, to_toml

DEFAULT = "runs/{env}/{time}-{id}"
PLACEHOLDERS = ("{env}", "{time}", "{id}")
CONFIG, METRICS, SUMMARY = "config.toml", "metrics.jsonl", "summary.json"


class RunDirError(ConfigError):
    """The run directory cannot be used (it holds another run, or cannot be created)."""


def path(template: str, env_name: str) -> Path | None:
    """The directory `template` names for a run of `env_name` (None for ""). A path without
    placeholders comes back unchanged, so resolving twice is harmless."""
    if not template:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    filled = template.replace("{env}", env_name).replace("{time}", stamp)
    return Path(filled.replace("{id}", uuid.uuid4().hex[:6]))


def create(directory: Path, env_name: str, cfg: Config) -> Path:
    """Make `directory` and write `cfg` into it as config.toml. `cfg` keeps train.run_dir as the
    template it was given, so `puffer train --config DIR/config.toml` starts a new run directory."""
    if (directory / METRICS).exists() or (directory / SUMMARY).exists():
        raise RunDirError(
            f"run directory {directory} already holds a run; pass another --train.run-dir "
            f"(e.g. the default {DEFAULT!r}) or remove it"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunDirError(f"cannot create the run directory {directory}: {e}") from None
    (directory / CONFIG).write_text(to_toml(cfg, env_name))
    return directory


def write_summary(directory: Path, summary: dict[str, Any]) -> Path:
    out = directory / SUMMARY
    out.write_text(json.dumps(summary, indent=2) + "\n")
    return out


def find(paths: list[str | Path]) -> list[Path]:
    """Every run directory (one holding metrics.jsonl) at or below each of `paths`, in order."""
    found: list[Path] = []
    for given in map(Path, paths):
        if (given / METRICS).is_file():
            found.append(given)
        elif given.is_dir():
            found += sorted(p.parent for p in given.rglob(METRICS))
    return found
