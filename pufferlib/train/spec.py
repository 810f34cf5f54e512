"""What one training run is, resolved once: `RunSpec.build` turns `puffer train`'s arguments (or
`pufferlib.train.train`'s) into the env, the resolved config, the run directory (train.run_dir's
template filled in) and, for a resume, the checkpoint it continues from (found and loaded here,
once). loop.learn trains what the spec says and resolves nothing again. Building a spec writes
nothing and imports torch only to load a resume's checkpoint; the user's mistakes are
ConfigErrors (resume.ResumeError, a kind of one) that name the fix.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pufferlib.train import config as configuration
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.run import rundir


@dataclass(frozen=True)
class RunSpec:
    """One run: `env_name`; `cfg`, the resolved config (train.run_dir the run directory, or "" for
    none); `run_dir`, that directory (None: nothing is written); `config_toml`, what its
    config.toml holds (train.run_dir kept as the template given, so that `puffer train --config
    DIR/config.toml` starts a new directory; None: `cfg`); `checkpoint`, the loaded checkpoint a resume
    continues from, its file in checkpoint["path"] (None for a new run, or a resumed run that
    saved none: it starts again from update 0 in its directory); `resuming`, whether `run_dir` is
    an existing run's, continued."""

    env_name: str
    cfg: Config
    run_dir: Path | None = None
    config_toml: Config | None = None
    checkpoint: dict[str, Any] | None = None
    resuming: bool = False

    def __post_init__(self) -> None:
        if self.config_toml is None:  # a spec made in Python: its config.toml is its config
            object.__setattr__(self, "config_toml", self.cfg)

    @classmethod
    def build(
        cls,
        env_name: str | None,
        overrides: dict[str, Any] | list[str] | None = None,
        *,
        config_file: str | Path | None = None,
        run_dir: str | Path | None = None,
        resume: str | Path | None = None,
        track: str | Sequence[str] = (),
    ) -> RunSpec:
        """The spec of a new run of `env_name` (None: `config_file`'s env_name), its config the
        layers of config.load (`config_file`, then `overrides`, with each `track` backend on), in
        `run_dir` (a path or a template with {env}, {time} and {id}; None: the config's own
        train.run_dir, "" for none); or, with `resume`, of that run directory continued (its own
        config.toml with `overrides` on top, and its latest checkpoint)."""
        overrides = flat_overrides(overrides, track)
        if resume is not None:
            return cls._resumed(Path(resume), env_name, overrides, config_file, run_dir)
        if not env_name and config_file:
            env_name = configuration.env_of(config_file)
        if not env_name:
            raise ConfigError(
                "give the environment (e.g. `puffer train ocean/squared`, train('ocean/squared')), "
                "or resume a run directory"
                + (f"; {config_file} names none (no env_name)" if config_file else "")
            )
        import pufferlib.environments as envs

        envs.get(env_name)  # an unknown env is refused before its config is read
        if run_dir is not None:
            overrides["train.run_dir"] = str(run_dir)
        written = configuration.load(env_name, overrides, config_file)
        directory = _directory(written["train"]["run_dir"], env_name)
        cfg = configuration.copy_config(written)
        cfg["train"]["run_dir"] = "" if directory is None else str(directory)  # checkpoints record it
        return cls(env_name, cfg, directory, written)

    @classmethod
    def _resumed(
        cls,
        directory: Path,
        env_name: str | None,
        overrides: dict[str, Any],
        config_file: str | Path | None,
        run_dir: str | Path | None,
    ) -> RunSpec:
        if config_file is not None:
            raise ConfigError("--resume continues with the run's own config: drop --config (config_file)")
        if run_dir is not None or "train.run_dir" in overrides:
            raise ConfigError("--resume continues in the run's own directory: drop --train.run-dir (run_dir)")
        env_name, cfg, checkpoint = _locate(directory, env_name, overrides)
        return cls(env_name, cfg, directory, cfg, checkpoint, resuming=True)

    @property
    def resumed(self) -> dict[str, Any] | None:
        """The training state the checkpoint holds (resume.snapshot's), or None."""
        return None if self.checkpoint is None else self.checkpoint["resume"]


def _directory(template: str, env_name: str) -> Path | None:
    """The directory `template` names for a run of `env_name` (None for ""): {env}, {time} and {id}
    filled in (rundir.py describes them)."""
    if not template:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    filled = template.replace("{env}", env_name).replace("{time}", stamp)
    return Path(filled.replace("{id}", uuid.uuid4().hex[:6]))


def _locate(
    directory: Path, env_name: str | None, overrides: dict[str, Any]
) -> tuple[str, Config, dict[str, Any] | None]:
    """(env name, config, checkpoint) to resume `directory` with: its config.toml with `overrides`
    on top, and its latest checkpoint that holds a resume state, loaded (checkpoint.load's dict, its
    file in "path"); checkpoint None when the run saved none (it stopped before its first
    checkpoint): the run starts again from its config, in its folder. ResumeError when the folder
    holds no run, a run of another env than `env_name`, or checkpoints that cannot be resumed
    (damaged, of another env, or weights only)."""
    from pufferlib.train.run import checkpoint
    from pufferlib.train.run.resume import ResumeError

    stored = directory / rundir.CONFIG
    if not stored.is_file():
        raise ResumeError(
            f"--resume {directory}: no run there (a run directory holds {rundir.CONFIG}); "
            "give the folder `puffer train` printed, e.g. runs/<env>/<time>-<id>"
        )
    saved_env = configuration.env_of(stored)
    if saved_env is None:
        raise ResumeError(f"--resume {directory}: its {rundir.CONFIG} names no env (env_name): not a run's")
    if env_name and env_name != saved_env:
        raise ResumeError(
            f"--resume {directory}: that run trained {saved_env}, not {env_name}; "
            f"run `puffer train --resume {directory}` (the env comes from the run)"
        )
    cfg = configuration.load(saved_env, overrides, stored)
    cfg["train"]["run_dir"] = str(directory)
    saved = checkpoint.listed(directory)
    if not saved:
        return saved_env, cfg, None
    for path in reversed(saved):
        try:
            payload = checkpoint.load(path)
        except checkpoint.CheckpointError:
            continue  # a damaged file: an older one will do
        if payload["env"] != saved_env:
            raise ResumeError(
                f"--resume {directory}: {path.name} was trained on {payload['env']}, not {saved_env}"
            )
        if "resume" in payload:
            payload["path"] = str(path)
            return saved_env, cfg, payload
        raise ResumeError(
            f"--resume {directory}: its latest checkpoint {path.name} holds the weights only (saved by an "
            "older pufferlib): start a new run, or evaluate it with `puffer eval`"
        )
    raise ResumeError(
        f"--resume {directory}: none of its checkpoints can be read ({', '.join(p.name for p in saved)}): "
        "start a new run, or move them away to start this one again from its config"
    )


def flat_overrides(
    overrides: dict[str, Any] | list[str] | None, track: str | Sequence[str] = ()
) -> dict[str, Any]:
    """The overrides (CLI tokens, or a dict flat or by section) as flat dotted keys (underscores
    for dashes), with each `track` backend on."""
    from pufferlib.train.run import tracking

    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    flat = configuration.flatten(dict(overrides or {}))
    flat = {key.replace("-", "_"): value for key, value in flat.items()}
    for backend in [track] if isinstance(track, str) else track:
        if backend not in tracking.EXTRAS:
            raise ConfigError(f"track={backend!r}: choose from {', '.join(tracking.EXTRAS)}")
        flat[f"track.{backend}"] = True
    return flat
