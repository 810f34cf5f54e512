"""Run directories: where one training run leaves everything it made.

    runs/ocean/squared/20261201-120000-3f9a1c/
        config.toml      the fully resolved config (`puffer train --config` loads it back)
        metrics.jsonl    one line per update (tracking.py)
        events.out.tfevents.*   TensorBoard (CleanRL's metric names)
        model_000012.pt  checkpoints (checkpoint.py)
        summary.json     what `train()` returned
        wandb/           W&B's files when --track wandb (offline runs: `wandb sync` them)
        wandb_id.txt     the W&B run id, which a resumed run logs to again
        run.lock         present while a run holds the directory

`train.run_dir` is a template: `{env}` (the binding's name, e.g. ocean/squared), `{time}` (local
time, YYYYmmdd-HHMMSS) and `{id}` (6 random hex digits) are filled in, once per run, by
spec.RunSpec.build; a path without them is used as it is, so a caller (a sweep trial) can choose
each run's directory. "" means no run directory: nothing is written. A directory that already
holds a run (or any config.toml) is refused: nothing is overwritten. A run holds its directory
with an exclusive lock (`run.lock`, flock) for as long as it runs, so a second `puffer train` (or
`--resume`) of the same directory is refused, not interleaved.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pufferlib.train.config import Config, ConfigError, to_toml

DEFAULT = "runs/{env}/{time}-{id}"
CONFIG, METRICS, SUMMARY = "config.toml", "metrics.jsonl", "summary.json"
LOCK, WANDB_ID = "run.lock", "wandb_id.txt"


class RunDirError(ConfigError):
    """The run directory cannot be used (it holds another run, or cannot be created)."""


def create(directory: Path, env_name: str, cfg: Config) -> Lock:
    """Make `directory`, take its lock and write `cfg` into it as config.toml; returns the lock
    (release it when the run ends). `cfg` keeps train.run_dir as the template it was given, so
    `puffer train --config DIR/config.toml` starts a new run directory."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunDirError(f"cannot create the run directory {directory}: {e}") from None
    lock = Lock(directory)
    try:
        check(directory)
        (directory / CONFIG).write_text(to_toml(cfg, env_name))
    except BaseException:
        lock.release()
        raise
    return lock


def check(directory: Path) -> None:
    """RunDirError if `directory` holds a run, or a config.toml that no run wrote: nothing is
    overwritten; or if its name is longer than the file system takes. Cheap, so train() asks before
    it builds anything; create() asks again, locked."""
    check_name(directory)
    if (directory / METRICS).exists() or (directory / SUMMARY).exists() or _is_run(directory / CONFIG):
        raise RunDirError(
            f"run directory {directory} already holds a run; continue it with `puffer train --resume "
            f"{directory}`, or pass another --train.run-dir (e.g. the default {DEFAULT!r})"
        )
    if (directory / CONFIG).exists():
        raise RunDirError(
            f"{directory} holds a {CONFIG} that is not a run's; refusing to overwrite it: "
            "pass another --train.run-dir (or move the file)"
        )


def check_name(directory: Path) -> None:
    """RunDirError naming a folder name or a path longer than the file system takes (NAME_MAX of the
    nearest existing parent, PATH_MAX) for `directory` and the files a run writes in it."""
    where = next((p for p in (directory, *directory.absolute().parents) if os.path.isdir(p)), Path("/"))
    try:
        name_max, path_max = os.pathconf(where, "PC_NAME_MAX"), os.pathconf(where, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    fix = "pass a shorter --train.run-dir"
    for part in directory.parts:
        if len(os.fsencode(part)) > name_max:
            raise RunDirError(
                f"train.run_dir: the folder name {part[:32]!r}... is {len(os.fsencode(part))} bytes, more "
                f"than the {name_max} the file system takes: {fix}"
            )
    length, room = len(os.fsencode(directory.absolute())), 128  # room: the longest file name a run writes
    if length + room > path_max:
        raise RunDirError(
            f"train.run_dir is a path of {length:,} bytes, more than the {path_max - room:,} that leave room "
            f"for the run's files: {fix}"
        )


def _is_run(config: Path) -> bool:
    try:
        if not config.is_file():
            return False
        with open(config, "rb") as f:  # its first bytes: a config.toml may be anything
            return f.read(4096).lstrip().startswith(b"env_name")
    except OSError:
        return False


class Lock:
    """An exclusive lock on a run directory (flock on its run.lock), held until `release()` or the
    process ends; RunDirError when another process holds it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / LOCK
        try:
            self.fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise RunDirError(f"cannot lock the run directory {directory}: {e}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(self.fd)
            self.fd = None
            raise RunDirError(
                f"run directory {directory} is in use by another run (pid {holder}): wait for it to "
                "end, or pass another --train.run-dir"
            ) from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            if self.path.exists():
                self.path.unlink()
        except OSError:
            pass  # the directory went away, or cannot be written: the lock still ends with the fd
        os.close(self.fd)
        self.fd = None


STALE = ("model_*.tmp", "metrics.tmp", "summary.tmp")  # what a save cut short by a kill leaves


def remove_stale(directory: Path) -> list[Path]:
    """Remove the half-written files (STALE) a killed run left; call it holding the lock, so that no
    run is writing them. Returns what was removed."""
    gone = []
    for pattern in STALE:
        for path in directory.glob(pattern):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                gone.append(path)
    return gone


def truncate_metrics(directory: Path, update: int) -> None:
    """Keep the metrics.jsonl lines up to update `update` (a resume continues from there); the lines
    a run logged after its last checkpoint, and a torn last line, are dropped."""
    metrics = directory / METRICS
    if not metrics.is_file():
        return
    kept = []
    try:
        for _, line, _ in metrics_lines(metrics):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(record, dict)
                and isinstance(record.get("update"), int)
                and record["update"] <= update
            ):
                kept.append(line)
    except ValueError as e:
        raise RunDirError(f"{e}: move it away to resume without its metrics") from None
    tmp = metrics.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    tmp.replace(metrics)


MAX_LINE = 1 << 20  # the longest metrics.jsonl line read (one is about 1 KiB)


def metrics_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """metrics.jsonl streamed: (line number, text, whether a newline ended it), never holding more
    than one line; ValueError for a line longer than MAX_LINE (not a metrics file: /dev/zero)."""
    with open(path, "rb") as f:
        for n, raw in enumerate(iter(lambda: f.readline(MAX_LINE + 1), b""), 1):
            if len(raw) > MAX_LINE:
                raise ValueError(
                    f"{path} line {n} is longer than {MAX_LINE // 1024:,} KiB: not a metrics.jsonl of "
                    "`puffer train` (a device or a data file?)"
                )
            ended = raw.endswith(b"\n")
            yield n, raw.decode("utf-8", errors="replace").rstrip("\r\n"), ended


def wandb_id(directory: Path) -> str:
    """The W&B run id of this run directory: made on first use, read back on resume."""
    stored = directory / WANDB_ID
    if stored.is_file():
        return stored.read_text().strip()
    run_id = uuid.uuid4().hex[:8]
    stored.write_text(run_id + "\n")
    return run_id


def write_summary(directory: Path, summary: dict[str, Any]) -> Path:
    """summary.json, written then renamed: a kill never leaves half of one."""
    out = directory / SUMMARY
    tmp = out.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        tmp.replace(out)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
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
