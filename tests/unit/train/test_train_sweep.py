"""`puffer sweep` on this host: Ray Tune in this process, Optuna's TPE, real training in every trial.

A 6-trial sweep of ocean/squared's learning rate finds a config that solves, with a run dir per
trial, the table, the Pareto front and the plot; a trial that raises is reported as failed while
the sweep goes on; a sweep stopped by SIGTERM saves its state and --resume finishes it.
"""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.tune", reason="puffer sweep needs pufferlib[sweep]")
pytest.importorskip("optuna", reason="puffer sweep needs pufferlib[sweep]")

pytestmark = pytest.mark.slow

PUFFER = [sys.executable, "-m", "pufferlib.cli"]
LEARNING_RATE = ["--param", "train.learning_rate=log:1e-4:1e-2"]


def sweep(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PUFFER, "sweep", "ocean/squared", "--max-concurrent", "2", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def results(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def report_of(done: subprocess.CompletedProcess) -> dict:
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_learning_rate_sweep_finds_a_config_that_solves(tmp_path):
    out = tmp_path / "sweep"
    done = sweep("--trials", "6", *LEARNING_RATE, "--out", str(out), "--within", "60", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    report = report_of(done)
    rows = report["rows"]
    assert len(rows) == 6 and {r["status"] for r in rows} <= {"finished", "stopped"}
    assert all(1e-4 <= r["train.learning_rate"] <= 1e-2 for r in rows)
    assert len({r["train.learning_rate"] for r in rows}) == 6, "TPE proposed the same rate twice"
    best = report["best"]
    assert best["solved"] and best["mean_return"] >= 0.9, best

    # the Pareto front: finished trials, none beaten on both score and seconds by another
    finished = [r for r in rows if r["status"] == "finished"]
    front = report["front"]
    assert front and all(r in finished for r in front)
    for row in front:
        assert not any(
            o["mean_return"] >= row["mean_return"]
            and o["seconds"] <= row["seconds"]
            and (o["mean_return"], o["seconds"]) != (row["mean_return"], row["seconds"])
            for o in finished
        )
    assert report["best_within"]["solved"] and report["best_within"]["seconds"] <= 60

    # one run dir per trial: config, metrics per update, summary and checkpoint for finished trials
    for row in finished:
        run_dir = Path(row["path"])
        assert (
            run_dir.parent == out
            and f"learning_rate = {row['train.learning_rate']!r}" in (run_dir / "config.toml").read_text()
        )
        updates = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
        summary = json.loads((run_dir / "summary.json").read_text())
        assert updates[-1]["update"] == summary["updates"] and summary["mean_return"] == row["mean_return"]
        assert Path(summary["checkpoint"]).parent == run_dir
    assert len(results(out)) == 6
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_trial_that_raises_is_reported_and_the_sweep_goes_on(tmp_path):
    """99 targets do not fit on squared's border: the env raises in its trial (the config is valid,
    so the sweep starts); the point tried first, then a good one."""
    out = tmp_path / "sweep"
    argv = ["--trials", "2", "--param", "env.num_targets=99,4", "--out", str(out)]
    argv += ["--first", "env.num_targets=99", "--first", "env.num_targets=4"]
    done = sweep(*argv)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "failed trial-" in done.stdout and "num_targets must be in 1..8, got 99" in done.stdout
    rows = {r["env.num_targets"]: r for r in results(out)}
    assert rows["99"]["status"] == "failed" and "num_targets" in rows["99"]["error"]
    assert rows["4"]["status"] == "finished" and rows["4"]["solved"] == "True"
    assert "best: --env.num-targets 4" in done.stdout


def test_a_value_out_of_range_is_refused_before_ray_starts(tmp_path):
    done = sweep("--param", "train.num_minibatches=0,4", "--out", str(tmp_path / "sweep"), timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "train.num_minibatches must be >= 1, got 0" in done.stderr
    assert not (tmp_path / "sweep").exists()


def test_sigterm_saves_the_sweep_and_resume_finishes_it(tmp_path):
    out = tmp_path / "sweep"
    # 8 trials of ~1 s, one at a time: the signal, sent once the first is done, finds several still to run
    # (with 3, a loaded machine once saw the last two finish before the signal arrived)
    argv = [*PUFFER, "sweep", "ocean/squared", "--trials", "8", "--max-concurrent", "1", *LEARNING_RATE]
    proc = subprocess.Popen(
        [*argv, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob("trial-*/summary.json")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)  # this process only: a process group signal kills Ray's services
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr[-3000:]
    assert f"--resume --out {out}" in stdout
    before = results(out)
    assert 1 <= len(before) < 8

    done = sweep("--resume", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    report = report_of(done)
    assert len(report["rows"]) == 8 and not report["unfinished"]
    assert {r["trial"] for r in before} <= {r["trial"] for r in report["rows"]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--param", "train.learning_rat=log:1e-4:1e-2"], "Did you mean train.learning_rate"),
        (["--param", "train.ent_coef=log:0:0.1"], "a log range needs LOW > 0"),  # 0 is in range, not on a log
        (["--param", "train.learning_rate=1e-2:1e-4"], "LOW must be below HIGH"),
        (["--param", "train.learning_rate=3e-4"], "one value is not a search"),
        (["--param", "train.anneal_lr=0:1"], "is not a number"),
        ([], "nothing to search"),
        (["--param", "train.gamma=0.9:0.99", "--first", "train.ent_coef=0"], "over the searched keys"),
        (["--param", "train.gamma=0.9:0.99", "--train.num-envs", "8"], "unknown key train.num_envs"),
    ],
)
def test_bad_search_spaces_are_clear_errors_before_ray_starts(tmp_path, capsys, argv, message):
    from pufferlib.cli import main

    assert main(["sweep", "ocean/squared", "--out", str(tmp_path / "s"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "s").exists()


def test_pareto_front_and_best_within():
    from pufferlib.train.scale.sweep_report import best_of, pareto_front

    def row(name, score, seconds, solved=True, status="finished"):
        return {"trial": name, "status": status, "m": score, "seconds": seconds, "solved": solved}

    rows = [
        row("fast", 0.90, 2.0),
        row("slow-better", 0.95, 9.0),
        row("dominated", 0.91, 9.5),
        row("best-but-slow", 0.97, 30.0),
        row("stopped", 0.99, 1.0, status="stopped"),
        row("unsolved", 0.5, 1.5, solved=False),
    ]
    front = pareto_front(rows, "m", "max")
    assert [r["trial"] for r in front] == ["unsolved", "fast", "slow-better", "best-but-slow"]
    assert best_of(rows, "m", "max")["trial"] == "best-but-slow"
    assert best_of(rows, "m", "max", within=10)["trial"] == "slow-better"
    assert best_of(rows, "m", "max", within=1.0) is None
    assert [r["trial"] for r in pareto_front(rows, "m", "min")] == ["unsolved"]


class _SlowRay:
    """Stands in for the ray module whose local node misses Ray's fixed 30 s registration window (a
    busy box) `misses` times; records what was called."""

    def __init__(self, misses: int) -> None:
        self.misses, self.calls = misses, []

    def init(self, **kwargs) -> None:
        self.calls.append("init")
        if len(self.calls) // 2 < self.misses:  # init, shutdown pairs before this one
            raise Exception("The current node timed out during startup. This could happen because ...")

    def shutdown(self) -> None:
        self.calls.append("shutdown")


def test_a_local_ray_node_that_misses_its_startup_window_is_tried_once_more(capsys):
    from pufferlib.train.config import ConfigError
    from pufferlib.train.scale.sweep import _start_ray

    once = _SlowRay(misses=1)
    _start_ray(once, None, quiet=True)
    assert once.calls == ["init", "shutdown", "init"] and "trying once more" in capsys.readouterr().err
    never = _SlowRay(misses=5)
    with pytest.raises(ConfigError, match=r"did not start \(2 tries.*--address auto"):
        _start_ray(never, None, quiet=True)
    assert never.calls == ["init", "shutdown", "init", "shutdown"]
    cluster = _SlowRay(misses=1)  # a cluster's address: its error is the cluster's, not retried
    with pytest.raises(Exception, match="timed out during startup"):
        _start_ray(cluster, "auto", quiet=True)
