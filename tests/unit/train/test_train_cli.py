"""`puffer train ENV --json` prints one JSON summary line; `puffer eval` loads its checkpoint."""

import json
import subprocess
import sys

import pytest

from pufferlib.cli import main

SUMMARY_KEYS = {"env", "steps", "seconds", "sps", "mean_return", "solved"}


def test_train_json_then_eval(tmp_path, capsys):
    rc = main(
        [
            "train",
            "ocean/bandit",
            "--json",
            "--train.run-dir",
            str(tmp_path / "run"),
            "--vec.num-envs",
            "8",
            "--train.total-timesteps",
            "30000",
        ]
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0 and len(out) == 1
    summary = json.loads(out[0])
    assert set(summary) >= SUMMARY_KEYS
    assert summary["env"] == "ocean/bandit" and summary["solved"] and summary["stop_reason"] == "solved"
    checkpoint = summary["checkpoint"]
    assert checkpoint.startswith(str(tmp_path))

    rc = main(["eval", "ocean/bandit", "--checkpoint", checkpoint, "--episodes", "50", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and result["episodes"] == 50 and result["mean_return"] >= 0.9 and result["solved"]

    assert main(["eval", "ocean/squared", "--checkpoint", checkpoint]) == 2
    assert "was trained on ocean/bandit" in capsys.readouterr().err


def test_unknown_key_is_a_one_line_error(capsys):
    assert main(["train", "ocean/bandit", "--train.learning-rat", "1e-3"]) == 2
    err = capsys.readouterr().err
    assert "unknown key train.learning_rat" in err and "learning_rate" in err and "Traceback" not in err


def test_unknown_env_and_bad_layout(capsys):
    assert main(["train", "ocean/squard"]) == 2
    assert "Did you mean: ocean/squared" in capsys.readouterr().err
    assert main(["train", "ocean/bandit", "--vec.num-envs", "3", "--vec.batch-size", "2"]) == 2
    assert "batch_size" in capsys.readouterr().err


def test_an_env_keyword_or_value_the_env_refuses_is_a_config_error(capsys):
    assert main(["train", "ocean/squared", "--env.no-such-keyword", "1", "--train.run-dir", ""]) == 2
    assert "could not make the env with [env]" in capsys.readouterr().err
    assert main(["train", "ocean/squared", "--env.num-targets", "0", "--train.run-dir", ""]) == 2
    err = capsys.readouterr().err
    assert "num_targets must be in 1.." in err and "Traceback" not in err


def test_eval_missing_checkpoint(tmp_path, capsys):
    assert main(["eval", "ocean/bandit", "--checkpoint", str(tmp_path / "nope.pt")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_print_config_shows_overrides(capsys):
    assert main(["train", "ocean/memory", "--print-config", "--train.seed", "9"]) == 0
    out = capsys.readouterr().out
    assert "[rnn]\nenabled = true" in out and "seed = 9" in out


@pytest.mark.slow
def test_console_script_quiet_without_a_tty(tmp_path):
    """Not a terminal: no dashboard, only the final summary."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pufferlib.cli",
            "train",
            "ocean/bandit",
            "--train.run-dir",
            "",
            "--vec.num-envs",
            "8",
            "--train.total-timesteps",
            "20000",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "training summary" in proc.stdout and "mean_return" in proc.stdout
    assert "\x1b[" not in proc.stdout  # no live redraws
    assert not any(tmp_path.iterdir())  # run_dir "" saves nothing
