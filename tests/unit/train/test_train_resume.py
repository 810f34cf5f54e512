"""A run is never lost: checkpoints hold the whole training state, and `puffer train --resume`
(train(resume=...)) continues a run in its own directory.

The resumed curve: identical up to the checkpoint (the same lines of metrics.jsonl), then close
to the uninterrupted run's, within the tolerance stated below. It is not bit-identical after the
resume: the envs' state (CartPole's physics, episodes in progress) is not in the checkpoint, so a
resumed run resets its envs with a seed derived from the run's seed and the update
(resume.reset_seed). What is restored exactly (weights, Adam, the counters, the episode window, the
torch/numpy/python RNGs) makes a resume reproducible bit for bit: resuming the same checkpoint twice
gives the same curve.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from pufferlib.cli import main
from pufferlib.train import config, evaluate, train
from pufferlib.train.run import checkpoint, rundir

ENV = "classic_control/CartPole-v1"
UPDATES, CUT, ROWS, STEPS = 16, 8, 4, 64
OVERRIDES = {
    "vec.num_envs": ROWS,
    "train.num_steps": STEPS,
    "train.total_timesteps": UPDATES * ROWS * STEPS,
    "train.stop_when_solved": False,
    "train.checkpoint_interval": 2,  # saving draws from no RNG: the runs train the same either way
}
CLOCK = ("time", "sps", "sps_update")  # wall-clock figures differ between any two runs
RETURN_TOLERANCE = 0.2  # relative, per update after the resume (measured: at most 0.10 over seeds 1-3)


def _records(run_dir: Path) -> list[dict]:
    lines = (run_dir / rundir.METRICS).read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in CLOCK} for line in lines]


def _stop_at(update: int):
    def hook(progress: dict) -> None:
        if progress["update"] == update:
            raise KeyboardInterrupt  # as Ctrl-C after that update: the run saves and returns

    return hook


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted run; the same run stopped after update CUT, then resumed (twice, from copies)."""
    base = tmp_path_factory.mktemp("resume")
    whole = train(ENV, {**OVERRIDES, "track.tensorboard": False}, run_dir=base / "whole")
    cut = train(ENV, OVERRIDES, run_dir=base / "cut", on_update=_stop_at(CUT))
    assert cut["stop_reason"] == "interrupted" and cut["updates"] == CUT
    shutil.copytree(base / "cut", base / "again")
    saved = checkpoint.load(base / "cut" / checkpoint.name(CUT))
    resumed = train(None, resume=base / "cut")
    again = train(None, {"track.tensorboard": False}, resume=base / "again")
    return base, whole, saved, resumed, again


def test_the_resumed_curve_follows_the_uninterrupted_one(runs):
    base, whole, _, resumed, _ = runs
    a, b = _records(base / "whole"), _records(base / "cut")
    assert [r["update"] for r in b] == list(range(1, UPDATES + 1)) == [r["update"] for r in a]
    assert a[:CUT] == b[:CUT]  # up to the checkpoint: the same run
    shift = a[0]["learning_rate"] * ROWS / OVERRIDES["train.total_timesteps"]
    for i, (x, y) in enumerate(zip(a[CUT:], b[CUT:], strict=True)):
        # the resumed run's first rollout starts from a reset: one more observation per env row
        assert y["global_step"] == x["global_step"] + ROWS
        # annealed by the steps before each update: from the second on, lower by that much
        assert y["learning_rate"] == pytest.approx(x["learning_rate"] - (shift if i else 0), abs=1e-9)
        assert y["episodic_return"] == pytest.approx(x["episodic_return"], rel=RETURN_TOLERANCE)
    assert resumed["updates"] == whole["updates"] == UPDATES and resumed["run_dir"] == str(base / "cut")
    assert resumed["resumed_from"].endswith(checkpoint.name(CUT))


def test_a_resume_is_reproducible_bit_for_bit(runs):
    base, *_ = runs
    assert _records(base / "cut") == _records(base / "again")
    saved = [
        checkpoint.load(p)
        for p in (base / "cut" / checkpoint.name(UPDATES), base / "again" / checkpoint.name(UPDATES))
    ]
    for name, tensor in saved[0]["state_dict"].items():
        assert torch.equal(tensor, saved[1]["state_dict"][name]), name


def test_tensorboard_steps_continue_in_the_same_folder(runs):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    base, _, _, resumed, _ = runs
    events = EventAccumulator(str(base / "cut"))
    events.Reload()
    # the folder holds the first run's event file and the resumed one's; which one is read first
    # depends on their names (time, host, pid), so compare the steps as a set: none twice, none lost
    steps = sorted(e.step for e in events.Scalars("charts/episodic_return"))
    assert len(set(steps)) == len(steps) == UPDATES and steps[-1] == resumed["steps"]


def test_a_checkpoint_holds_what_a_resume_needs(runs):
    base, _, payload, *_ = runs
    state = payload["resume"]
    assert {"optimizer", "learning_rate", "steps", "update", "episodes", "seconds", "episode_stats"} <= set(
        state
    )
    assert {"torch", "numpy", "python"} <= set(state["rng"]) and isinstance(state["env_seed"], int)
    assert state["update"] == payload["update"] == CUT and state["optimizer"]["state"]  # Adam's moments
    assert payload["config"]["train"]["run_dir"] == str(base / "cut")


def test_a_resumed_run_keeps_pruning_its_checkpoints(runs):
    base, *_ = runs
    kept = checkpoint.listed(base / "cut")  # every 2 updates, the last 3 plus the best
    assert 3 <= len(kept) <= 4 and [p.name for p in kept[-3:]] == [checkpoint.name(u) for u in (12, 14, 16)]


def test_keep_the_last_checkpoints_and_the_best(tmp_path):
    cfg = {"train": {"checkpoint_interval": 1, "checkpoint_minutes": 0.0, "keep_checkpoints": 2}}
    saver = checkpoint.Saver(tmp_path, cfg)
    policy = torch.nn.Linear(2, 2)
    for update, mean_return in enumerate([1.0, 5.0, 2.0, None, 3.0, 4.0], start=1):
        assert saver.due(update)
        saver.saved(checkpoint.save(tmp_path, ENV, cfg, policy, update, update, mean_return), mean_return)
    assert [p.name for p in checkpoint.listed(tmp_path)] == [checkpoint.name(u) for u in (2, 5, 6)]
    assert not list(tmp_path.glob("*.tmp"))
    assert checkpoint.Saver(tmp_path, cfg).best[1].name == checkpoint.name(2)  # a resumed run knows it


def test_old_weights_only_checkpoints_still_evaluate(runs, tmp_path):
    base, *_ = runs
    payload = checkpoint.load(base / "whole" / checkpoint.name(UPDATES))
    old = {k: payload[k] for k in ("env", "config", "state_dict", "steps", "update", "mean_return")}
    torch.save(old, tmp_path / "model_000001.pt")
    assert evaluate(ENV, tmp_path / "model_000001.pt", episodes=2)["episodes"] == 2


def test_a_larger_budget_extends_a_finished_run(runs, capsys):
    base, *_ = runs
    args = [
        "train",
        "--resume",
        str(base / "again"),
        "--json",
        "--train.total-timesteps",
        str(2 * UPDATES * ROWS * STEPS),
    ]
    assert main([*args, "--print-config"]) == 0
    assert f"total_timesteps = {2 * UPDATES * ROWS * STEPS}" in capsys.readouterr().out


def test_resuming_something_else_is_a_clear_error(runs, tmp_path, capsys):
    base, *_ = runs
    assert main(["train", "ocean/squared", "--resume", str(base / "cut")]) == 2
    err = capsys.readouterr().err
    assert f"trained {ENV}, not ocean/squared" in err and "Traceback" not in err
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "no run there" in capsys.readouterr().err
    (tmp_path / "config.toml").write_text("[train]\nseed = 1\n")
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "names no env" in capsys.readouterr().err


def test_metrics_after_the_checkpoint_are_dropped_on_resume(tmp_path):
    lines = [json.dumps({"update": u, "global_step": 10 * u}) for u in (1, 2, 3)]
    (tmp_path / rundir.METRICS).write_text("\n".join(lines) + '\n{"update": 4, "glo')  # torn by a kill
    rundir.truncate_metrics(tmp_path, 2)
    assert (tmp_path / rundir.METRICS).read_text().splitlines() == lines[:2]


def test_checkpoints_of_the_wrong_shape_are_refused(tmp_path, capsys):
    good = {"env": ENV, "config": {"train": {}}, "state_dict": {"w": torch.zeros(1)}}
    for key, value, expected in (
        ("config", "oops", "dict of config sections"),
        ("state_dict", [1, 2], "dict of tensors"),
    ):
        torch.save({**good, key: value}, tmp_path / "model.pt")
        with pytest.raises(checkpoint.CheckpointError, match=expected):
            checkpoint.load(tmp_path / "model.pt")
        assert main(["eval", ENV, "--checkpoint", str(tmp_path / "model.pt")]) == 2
        err = capsys.readouterr().err
        assert f"its {key!r} should be" in err and "Traceback" not in err


def test_checkpoints_every_few_minutes_by_default(tmp_path):
    overrides = {"vec.num_envs": 8, "train.num_steps": 32, "train.stop_when_solved": False}
    overrides["train.total_timesteps"] = 8 * 32 * 6
    overrides |= {"train.checkpoint_minutes": 1e-5, "track.tensorboard": False}  # every update, by the clock
    summary = train("ocean/bandit", overrides, run_dir=tmp_path / "run")
    kept = checkpoint.listed(tmp_path / "run")
    assert 3 <= len(kept) <= 4 and kept[-1] == Path(summary["checkpoint"])
    assert summary["updates"] == 6 and [p.name for p in kept[-3:]] == [checkpoint.name(u) for u in (4, 5, 6)]
    assert (
        config.defaults()["train"]["checkpoint_minutes"] == 10
        and config.defaults()["train"]["keep_checkpoints"] == 3
    )


def test_checkpoint_settings_are_checked(capsys):
    assert main(["train", "ocean/bandit", "--train.run-dir", "", "--train.keep-checkpoints", "-1"]) == 2
    assert "train.keep_checkpoints must be >= 0" in capsys.readouterr().err
