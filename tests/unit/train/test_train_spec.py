"""One `puffer train` is resolved once: RunSpec.build turns the arguments into the env, the config,
the run directory and a resume's checkpoint, and the loop trains that spec without resolving any of
it again. A resumed run reads its checkpoint file once (counted by Python's audit hook on `open`,
the call torch.load reads a file through); the user's mistakes are one-line errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pufferlib.cli import main
from pufferlib.environments import UnknownEnvironmentError
from pufferlib.train import train, train_spec
from pufferlib.train.config import ConfigError
from pufferlib.train.run import checkpoint, rundir
from pufferlib.train.run.resume import ResumeError
from pufferlib.train.spec import RunSpec

ENV = "ocean/cartpole"
SMALL = {"train.total_timesteps": 16_384, "train.checkpoint_interval": 1, "train.device": "cpu"}

_opened: list[str] | None = None  # the files opened while a test records them


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], str | bytes | os.PathLike):
        _opened.append(os.path.realpath(os.fsdecode(args[0])))


sys.addaudithook(_audit)  # a hook cannot be removed: it records only inside _recording()


class _recording:
    """The files `open`ed inside the block, as resolved paths."""

    def __enter__(self) -> list[str]:
        global _opened
        _opened = []
        return _opened

    def __exit__(self, *exc: object) -> None:
        global _opened
        _opened = None


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> Path:
    """A finished run of two updates, a checkpoint after each."""
    run_dir = tmp_path_factory.mktemp("spec") / "run"
    summary = train(ENV, SMALL, run_dir=run_dir)
    assert summary["updates"] == 2 and summary["checkpoint"].endswith(checkpoint.name(2))
    return run_dir


def test_a_spec_resolves_the_run_directory_once_and_writes_nothing(tmp_path):
    template = str(tmp_path / "runs" / "{env}" / "{time}-{id}")
    first, second = (RunSpec.build(ENV, SMALL, run_dir=template) for _ in range(2))
    assert first.run_dir != second.run_dir  # {id}: each build is one run
    assert first.run_dir.parent == tmp_path / "runs" / "ocean" / "cartpole"
    assert first.cfg["train"]["run_dir"] == str(first.run_dir)  # what checkpoints record
    assert first.config_toml["train"]["run_dir"] == template  # config.toml starts a new run when reused
    assert not (tmp_path / "runs").exists()


def test_the_loop_trains_in_the_spec_s_directory(tmp_path):
    spec = RunSpec.build(ENV, {**SMALL, "train.total_timesteps": 8_192}, run_dir=tmp_path / "{id}")
    summary = train_spec(spec)
    assert summary["run_dir"] == str(spec.run_dir)
    assert [p.parent for p in tmp_path.glob(f"*/{rundir.CONFIG}")] == [spec.run_dir]


def test_a_resume_reads_its_checkpoint_once(saved_run, capsys):
    latest = str((saved_run / checkpoint.name(2)).resolve())
    with _recording() as opened:
        spec = RunSpec.build(None, {"train.total_timesteps": 24_576}, resume=saved_run)
    assert opened.count(latest) == 1 and spec.checkpoint["path"] == str(saved_run / checkpoint.name(2))
    assert spec.env_name == ENV and spec.resuming and spec.resumed["update"] == 2
    with _recording() as opened:
        summary = train_spec(spec)
    assert opened.count(latest) == 0  # the loop, its checkpoint Saver: the spec's payload, not the file
    assert summary["resumed_from"] == spec.checkpoint["path"] and summary["updates"] == 3

    with _recording() as opened:  # the command line: parse, build, train, all of it
        code = main(["train", "--resume", str(saved_run), "--json", "--train.total-timesteps", "32768"])
    assert code == 0, capsys.readouterr().err
    assert opened.count(str((saved_run / checkpoint.name(3)).resolve())) == 1


def test_a_config_file_names_the_env(saved_run):
    spec = RunSpec.build(None, config_file=saved_run / rundir.CONFIG, run_dir="")
    assert spec.env_name == ENV and spec.run_dir is None and spec.checkpoint is None
    assert spec.cfg["train"]["checkpoint_interval"] == 1  # the file's value


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ConfigError, r"give the environment \(e\.g\. `puffer train ocean/squared`"),
        ({"env_name": "ocean/nope"}, UnknownEnvironmentError, r"Unknown environment 'ocean/nope'"),
        ({"env_name": ENV, "track": "tensorboard"}, ConfigError, r"track='tensorboard': choose from"),
        ({"env_name": ENV, "overrides": ["--train.gamma", "2"]}, ConfigError, r"train\.gamma must be"),
        ({"resume": "{run}", "config_file": "{run}/config.toml"}, ConfigError, r"drop --config"),
        ({"resume": "{run}", "run_dir": "elsewhere"}, ConfigError, r"drop --train\.run-dir"),
        ({"resume": "{run}", "env_name": "ocean/squared"}, ResumeError, r"that run trained ocean/cartpole"),
        ({"resume": "{tmp}"}, ResumeError, r"no run there"),
    ],
)
def test_bad_arguments_are_clear_errors(saved_run, tmp_path, kwargs, error, message):
    fill = {"run": str(saved_run), "tmp": str(tmp_path)}
    kwargs = {k: v.format(**fill) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(error, match=message):
        RunSpec.build(kwargs.pop("env_name", None), **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_of_another_env_is_refused_when_the_spec_is_built(saved_run, tmp_path):
    import torch

    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / rundir.CONFIG).write_bytes((saved_run / rundir.CONFIG).read_bytes())
    latest = checkpoint.listed(saved_run)[-1]
    payload = torch.load(latest, weights_only=True)
    torch.save({**payload, "env": "ocean/squared"}, copy / latest.name)
    with pytest.raises(ResumeError, match=rf"{latest.name} was trained on ocean/squared, not ocean/cartpole"):
        RunSpec.build(None, resume=copy)


@pytest.mark.parametrize(
    "argv",
    [
        ["train"],
        ["train", "--resume", "{run}", "--config", "{run}/config.toml"],
        ["train", "--resume", "{run}", "--train.run-dir", "x"],
        ["train", "--resume", "{tmp}"],
    ],
)
def test_the_command_says_it_in_one_line(saved_run, tmp_path, capsys, argv):
    code = main([a.format(run=saved_run, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("puffer train: error: ") and err.count("\n") == 1, err


def test_the_loop_calls_nothing_above_it():
    """loop.py imports neither the API (pufferlib.train's train()) nor the command line, and learn()
    takes the spec and the hooks only: nothing it could call back up through."""
    import ast
    import inspect

    from pufferlib.train import loop

    tree = ast.parse(Path(loop.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not imported & {"pufferlib.train", "pufferlib.train.cli", "pufferlib.cli"}
    assert list(inspect.signature(loop.learn).parameters) == ["spec", "hooks"]
