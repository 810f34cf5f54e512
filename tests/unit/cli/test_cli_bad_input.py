"""Bad input to `puffer train`, `eval`, `sweep` and `bench` is one line on stderr naming the thing and
what would work, exit 2, no traceback, and nothing left behind (no run directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pufferlib
from pufferlib.cli import main

ROOT = Path(pufferlib.__file__).resolve().parents[1]


def puffer(*argv: str | bytes, cwd: Path) -> subprocess.CompletedProcess:
    """`puffer ARGV` in `cwd` (so that the default runs/ would land there), this checkout's library."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", *argv], cwd=cwd, env=env, capture_output=True, timeout=120
    )


def one_error_line(done: subprocess.CompletedProcess) -> str:
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_train_refuses_a_negative_learning_rate_and_makes_nothing(tmp_path):
    done = puffer("train", "ocean/squared", "--train.learning-rate", "-1", cwd=tmp_path)
    err = one_error_line(done)
    assert "puffer train: error: --train.learning_rate: train.learning_rate must be > 0, got -1.0" in err
    assert list(tmp_path.iterdir()) == []


def test_train_refuses_a_run_dir_name_that_is_not_utf8_and_makes_nothing(tmp_path):
    done = puffer("train", "ocean/squared", "--train.run-dir", b"runs/\xff", cwd=tmp_path)
    err = one_error_line(done)
    assert "train.run_dir" in err and "is not UTF-8 text" in err
    assert list(tmp_path.iterdir()) == []


def test_train_refuses_an_unknown_device(capsys):
    assert main(["train", "ocean/squared", "--train.device", "banana"]) == 2
    err = capsys.readouterr().err
    assert "train.device must be one of auto, cpu, cuda, cuda:N (a GPU index) or mps, got 'banana'" in err


@pytest.mark.parametrize(
    ("key", "extra"),
    [
        ("train.torch_threads", []),  # 100,000 crashed the trainer and starved the machine of processes
        ("vec.num_threads", ["--vec.backend", "native"]),
        ("vec.num_workers", ["--vec.backend", "multiprocessing", "--vec.overwork", "true"]),
        ("vec.num_envs", ["--vec.backend", "serial"]),
    ],
)
def test_train_refuses_more_threads_workers_or_envs_than_the_machine_can_take(key, extra, tmp_path, capsys):
    from pufferlib.train.setup import PER_CPU
    from pufferlib.vector.autotune import usable_cpus

    limit = PER_CPU[key] * usable_cpus()
    value = limit * 2 if key == "vec.num_workers" else limit + 1  # num_envs a multiple of num_workers
    sizes = [] if key == "vec.num_envs" else ["--vec.num-envs", str(value)]
    run_dir = tmp_path / "run"
    argv = ["train", "ocean/squared", f"--{key}", str(value), *sizes, *extra, "--train.run-dir", str(run_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {key} is {value:,}, more than this machine's limit of {limit:,}" in err, err
    assert f"use at most {limit:,}" in err and len(err.strip().splitlines()) == 1
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "hidden-size",
            "-4",
            "could not make the policy with [policy] hidden_size=-4: Trying to create tensor",
        ),
        ("hidden-size", "abc", "[policy]: policy.hidden_size expects an integer like 8 or 1e6, got 'abc'"),
        ("hidden-size", "1e7", "the policy made with [policy] hidden_size=10000000 needs 363.8 TiB on cpu"),
        ("hidden-size", "0", "[policy] hidden_size=0 has layers with no weights (policy.encoder.0.weight"),
        ("hiden-size", "8", "unknown key policy.hiden_size. Did you mean policy.hidden_size? Default takes"),
    ],
)
def test_train_refuses_bad_policy_values_naming_the_key(key, value, message, tmp_path, capsys):
    """As --env.* does: exit 2 and one line naming the key, not torch's error at exit 1; hidden-size 0
    (a policy with no weights in its layers) is refused, not trained; nothing is allocated for 1e7."""
    run_dir = tmp_path / "run"
    argv = ["train", "ocean/squared", f"--policy.{key}", value, "--train.run-dir", str(run_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("run_dir", "message"),
    [
        (
            "a" * 300,
            "train.run_dir: the folder name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'... is 300 bytes, more ",
        ),
        ("/".join(["b" * 200] * 21), "train.run_dir is a path of "),
    ],
)
def test_train_refuses_a_run_dir_name_too_long_for_the_file_system(run_dir, message, tmp_path, capsys):
    assert main(["train", "ocean/squared", "--train.run-dir", str(tmp_path / run_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and "pass a shorter --train.run-dir" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_train_refuses_minibatches_of_one_sample(tmp_path, capsys):
    """100,000 minibatches of ocean/squared's 1,024 samples were minibatches of 1, whose normalised
    advantages are all 0: refused once the envs say how many rows there are, before any run dir."""
    run_dir = tmp_path / "run"
    assert (
        main(["train", "ocean/squared", "--train.num-minibatches", "100000", "--train.run-dir", str(run_dir)])
        == 2
    )
    err = capsys.readouterr().err
    assert (
        "train.num_minibatches 100,000 splits the 1,024 samples of an update (32 agent rows x 32 steps)"
        in err
    )
    assert "into minibatches of 0: use at most 512" in err and len(err.strip().splitlines()) == 1
    assert not run_dir.exists()
    assert (
        main(["train", "ocean/squared", "--train.num-minibatches", "1024", "--train.run-dir", str(run_dir)])
        == 2
    )
    assert "into minibatches of 1: use at most 512" in capsys.readouterr().err


def test_eval_refuses_a_checkpoint_whose_weights_are_not_finite(tmp_path, capsys):
    import torch

    import pufferlib.environments as envs
    from pufferlib.train import config
    from pufferlib.train.run import checkpoint
    from pufferlib.train.setup import make_policy

    cfg = config.load("ocean/squared")
    env = envs.get("ocean/squared").make_env()
    policy = make_policy(envs.get("ocean/squared"), env, cfg)
    env.close()
    path = checkpoint.save(tmp_path, "ocean/squared", cfg, policy, steps=1, update=1, mean_return=None)
    assert main(["eval", "ocean/squared", "--checkpoint", str(path), "--episodes", "1"]) == 0  # as saved
    capsys.readouterr()
    with torch.no_grad():
        next(policy.parameters())[0, 0] = float("nan")  # what a diverged run would hold
    path = checkpoint.save(tmp_path, "ocean/squared", cfg, policy, steps=1, update=2, mean_return=None)
    assert main(["eval", "ocean/squared", "--checkpoint", str(path), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{path} holds weights that are not finite numbers (NaN or infinite, first in 'policy." in err, err
    assert "use an earlier checkpoint" in err and len(err.strip().splitlines()) == 1


class _Payload:
    """Pickles as a call of print: what a malicious checkpoint would make a call of os.system."""

    def __reduce__(self):
        return (print, ("this ran while loading",))


def test_eval_refuses_a_pickle_payload_in_one_line_saying_it_was_not_loaded(tmp_path, capsys):
    import torch

    path = tmp_path / "model_000001.pt"
    torch.save({"env": "ocean/squared", "config": {}, "state_dict": {}, "payload": _Payload()}, path)
    assert main(["eval", "ocean/squared", "--checkpoint", str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert f"{path} was not loaded: it holds pickled Python objects (print)" in err, err
    assert len(err.strip().splitlines()) == 1 and "weights_only" not in err
    assert "this ran" not in captured.out


def test_train_with_wins_on_an_env_without_a_win_info_says_so_and_keeps_the_run(tmp_path):
    """solve_metric wins can only be checked once an episode ends: exit 2 then, naming the infos the env
    does report, with the first update saved (nothing trained is lost)."""
    done = puffer("train", "ocean/squared", "--train.solve-metric", "wins", "--no-dashboard", cwd=tmp_path)
    err = one_error_line(done)
    assert "train.solve_metric wins needs an env that reports a `win` info" in err, err
    assert "reports episode_return, episode_length" in err and "Use train.solve_metric return" in err, err
    assert list(tmp_path.glob("runs/ocean/squared/*/model_*.pt")), err


def test_train_refuses_a_config_file_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "run.toml"
    path.write_bytes(b'env_name = "ocean/squared"\n# \xe9\n')
    assert main(["train", "--config", str(path)]) == 2
    assert f"config file {path} is not UTF-8 text" in capsys.readouterr().err


def test_train_reads_a_config_file_no_further_than_a_config_can_be_long(capsys):
    assert main(["train", "ocean/squared", "--config", "/dev/zero"]) == 2  # was read until OOM-killed
    err = capsys.readouterr().err
    assert "config file /dev/zero: it is larger than 1,024 KiB, more than any config" in err, err


def test_sweep_without_its_extra_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` fails
    out = tmp_path / "sweep"
    argv = ["sweep", "ocean/squared", "--param", "train.learning_rate=log:1e-4:1e-2", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "puffer sweep: error: needs Ray Tune and Optuna (ray is missing): pip install 'pufferlib[sweep]'"
        in err
    )
    assert not out.exists()


@pytest.fixture
def saved(tmp_path):
    """--from-json inputs: missing, not JSON, JSON of another shape."""
    (tmp_path / "bad.json").write_text("{oops")
    (tmp_path / "other.json").write_text(json.dumps({"machine": {}, "results": [{"sps": 1}]}))
    (tmp_path / "rows.json").write_text(json.dumps({"machine": {}, "results": [{"peer": "serial"}]}))
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--num-envs", "abc"], "--num-envs expects comma-separated env counts >= 1, like 2,8; got 'abc'"),
        (["--num-envs", "2,0"], "--num-envs expects comma-separated env counts >= 1"),
        (["--repeats", "0"], "--repeats must be >= 1, got 0"),
        (["--workers", "0"], "--workers must be >= 1, got 0"),
        (["--scale", "0"], "--scale must be > 0, got 0.0"),
        (["--from-json", "{dir}/missing.json"], "--from-json {dir}/missing.json: cannot read it"),
        (["--from-json", "{dir}/bad.json"], "--from-json {dir}/bad.json is not JSON"),
        (["--from-json", "{dir}/other.json"], "holds no 'results' rows"),
        (["--from-json", "{dir}/rows.json"], "a result row lacks or mistypes"),
    ],
)
def test_bench_bad_arguments(saved, capsys, argv, message):
    argv = [a.format(dir=saved) for a in argv]
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("puffer bench: error: ") and message.format(dir=saved) in err, err
