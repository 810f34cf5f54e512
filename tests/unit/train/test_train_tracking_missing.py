"""A package that is not installed is an error that names the extra to install, raised before anything
is written: wandb and neptune (optional extras), tensorboard (the train extra), and torch for
`puffer train` / `puffer eval` on a host venv. `sys.modules[name] = None` is Python's own way to make
an import fail as if the package were absent."""

from __future__ import annotations

import sys

import pytest

from pufferlib.cli import main
from pufferlib.train import train
from pufferlib.train.run.tracking import TrackingError


@pytest.mark.parametrize("backend", ["wandb", "neptune"])
def test_a_missing_tracker_names_its_extra(backend, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, backend, None)
    with pytest.raises(TrackingError, match=rf"pip install 'pufferlib\[{backend}\]'"):
        train("ocean/bandit", track=backend, run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()  # refused before the run directory was made
    assert main(["train", "ocean/bandit", "--track", backend, "--train.run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("puffer train: error: --track") and f"pufferlib[{backend}]" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_missing_tensorboard_names_the_extra_and_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(TrackingError, match=r"pufferlib\[train\].*--track.tensorboard false"):
        train("ocean/bandit", run_dir=tmp_path / "run")
    summary = train("ocean/bandit", {"track.tensorboard": False}, run_dir=tmp_path / "run")
    assert (tmp_path / "run" / "metrics.jsonl").is_file()  # the rest of the run directory still works
    assert not list((tmp_path / "run").glob("events.out.tfevents.*")) and summary["solved"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_no_torch_names_the_train_extra(command, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    extra = ["--checkpoint", "x.pt"] if command == "eval" else []
    assert main([command, "ocean/bandit", *extra]) == 2
    err = capsys.readouterr().err
    assert f"puffer {command}: error: needs PyTorch" in err and "pip install 'pufferlib[train]'" in err
    assert "Traceback" not in err
    assert main(["train", "ocean/bandit", "--print-config"]) == 0  # needs no torch
