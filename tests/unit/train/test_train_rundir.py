"""`puffer train ocean/squared` leaves a run directory: config.toml (loads back with --config),
metrics.jsonl (one line per update), TensorBoard events under CleanRL's names, the checkpoint and
summary.json; a run directory is never overwritten; the API chooses it per call (a sweep trial)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pufferlib.cli import main
from pufferlib.train import config, train

PUFFER = str(Path(sys.executable).with_name("puffer"))
METRIC_KEYS = {
    "update", "global_step", "time", "sps", "sps_update", "episodes", "episodic_return", "episodic_length",
    "learning_rate", "policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance",
}  # fmt: skip


@pytest.fixture(scope="module")
def squared_run(tmp_path_factory):
    """`puffer train ocean/squared` as a user runs it, off a terminal, in an empty directory."""
    cwd = tmp_path_factory.mktemp("work")
    proc = subprocess.run(
        [PUFFER, "train", "ocean/squared", "--progress-seconds", "0"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr
    [run_dir] = (cwd / "runs" / "ocean" / "squared").iterdir()
    return cwd, run_dir, proc.stdout


def test_the_run_directory_holds_everything(squared_run):
    cwd, run_dir, _ = squared_run
    stamp, _, short = run_dir.name.rpartition("-")
    assert len(short) == 6 and len(stamp) == len("20261201-120000")
    names = {p.name for p in run_dir.iterdir()}
    assert {"config.toml", "metrics.jsonl", "summary.json"} <= names
    assert any(n.startswith("events.out.tfevents.") for n in names)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["solved"] and summary["run_dir"] == str(run_dir.relative_to(cwd))
    assert (cwd / summary["checkpoint"]).parent == run_dir and (cwd / summary["checkpoint"]).is_file()


def test_metrics_jsonl_has_a_line_per_update(squared_run):
    _, run_dir, _ = squared_run
    summary = json.loads((run_dir / "summary.json").read_text())
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) == summary["updates"] and [x["update"] for x in lines] == list(range(1, len(lines) + 1))
    assert set(lines[-1]) >= METRIC_KEYS and "env/score" in lines[-1]
    assert lines[-1]["global_step"] == summary["steps"]
    steps = [x["global_step"] for x in lines]
    assert steps == sorted(steps)
    rates = [x["learning_rate"] for x in lines]
    assert rates[0] == 1e-3 and rates == sorted(rates, reverse=True)  # annealed
    assert lines[-2]["value_loss"] > 0 and 0 <= lines[-2]["clipfrac"] <= 1


def test_tensorboard_events_use_cleanrl_names(squared_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, run_dir, _ = squared_run
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    cleanrl = {"charts/episodic_return", "charts/episodic_length", "charts/SPS", "charts/learning_rate"}
    cleanrl |= {"losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl"}
    cleanrl |= {"losses/clipfrac", "losses/explained_variance"}
    assert cleanrl <= tags
    returns = events.Scalars("charts/episodic_return")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert returns[-1].step == summary["steps"] and returns[-1].value == pytest.approx(summary["mean_return"])


def test_progress_lines_off_a_terminal(squared_run):
    _, _, stdout = squared_run
    lines = [line for line in stdout.splitlines() if line.startswith("ocean/squared: ")]
    assert len(lines) >= 2
    assert all(" steps (" in x and "%)" in x and "SPS" in x and "return" in x and "ETA" in x for x in lines)
    assert "(update)" in lines[-1] and "(run)" in lines[-1]
    assert "\x1b[" not in stdout and "sps (whole run)" in stdout


def test_config_toml_loads_back(squared_run, capsys):
    _, run_dir, _ = squared_run
    written = tomllib.loads((run_dir / "config.toml").read_text())
    assert written.pop("env_name") == "ocean/squared"
    assert written == config.load("ocean/squared")  # the fully resolved config, nothing added
    # ENV comes from the file; the 7 belongs to --train.seed, not to the optional ENV
    reload = ["train", "--config", str(run_dir / "config.toml"), "--print-config", "--train.seed", "7"]
    assert main(reload) == 0
    again = tomllib.loads(capsys.readouterr().out)
    assert again["env_name"] == "ocean/squared"
    assert again["train"]["seed"] == 7 and again["train"]["gamma"] == 0.95


def test_a_run_directory_is_never_overwritten(tmp_path, capsys):
    args = ["train", "ocean/bandit", "--json", "--train.run-dir", str(tmp_path / "trial")]
    assert main(args) == 0
    before = (tmp_path / "trial" / "metrics.jsonl").read_text()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "already holds a run" in err and str(tmp_path / "trial") in err
    assert (tmp_path / "trial" / "metrics.jsonl").read_text() == before


def test_the_api_chooses_each_run_directory(tmp_path):
    summary = train("ocean/bandit", {"vec.num_envs": 8}, run_dir=tmp_path / "trial-3")
    assert summary["run_dir"] == str(tmp_path / "trial-3")
    assert Path(summary["checkpoint"]).parent == tmp_path / "trial-3"
    assert (tmp_path / "trial-3" / "metrics.jsonl").is_file()
    templated = train("ocean/bandit", {"vec.num_envs": 8}, run_dir=tmp_path / "sweep" / "{env}" / "{id}")
    assert Path(templated["run_dir"]).parent == tmp_path / "sweep" / "ocean" / "bandit"


def test_the_api_writes_nothing_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = train("ocean/bandit", {"vec.num_envs": 8})
    assert summary["run_dir"] is None and summary["checkpoint"] is None
    assert not any(tmp_path.iterdir())
