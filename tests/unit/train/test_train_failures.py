"""Any error ends a run cleanly: a dead worker, a NaN loss, a deleted run directory or a full disk
stops the loop saved (where it can), summary.json says stop_reason "error", and `puffer train`
prints one line with the `--resume` command and exits 1. A second Ctrl-C waits for the final save.
A run directory is taken by one run at a time, made only once the run is built, never overwritten."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _vector_envs import session

from pufferlib.cli import main
from pufferlib.train import train
from pufferlib.train.run import failure, rundir, signals

HERE = Path(__file__).resolve().parent  # beside _faulty_envs.py
ROOT = HERE.parents[2]
QUICK = {"vec.num_envs": 8, "train.stop_when_solved": False, "train.total_timesteps": 100_000}


def _puffer(*args: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
    """`puffer train ...` of this checkout, with the faulty bindings (tests/unit/train/_faulty_envs.py)."""
    paths = os.pathsep.join([str(ROOT), str(HERE)])
    extra = {"PYTHONPATH": paths, "PUFFERLIB_PLUGINS": "_faulty_envs", **(env or {})}
    cmd = [sys.executable, "-m", "pufferlib.cli", "train", *args]
    return subprocess.Popen(cmd, env={**os.environ, **extra}, text=True, **kwargs)


def _first_checkpoint(run_dir: Path, proc: subprocess.Popen) -> None:
    """Wait until the run in run_dir has saved a checkpoint (or ended, or 120 s passed)."""
    deadline = time.monotonic() + 120
    while not list(run_dir.glob("model_*.pt")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def _fails_cleanly(run_dir: Path, *args: str) -> tuple[str, dict]:
    proc = _puffer(
        *args,
        "--json",
        "--train.run-dir",
        str(run_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    out, err = proc.communicate(timeout=300)
    assert not session(proc.pid), "a worker outlived the trainer"
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and not out, err
    assert f"resume with: puffer train --resume {run_dir}" in err
    summary = json.loads((run_dir / rundir.SUMMARY).read_text())
    assert summary["stop_reason"] == "error" and summary["error"] in err
    assert not list(run_dir.glob("*.tmp"))
    return err, summary


@pytest.mark.slow
def test_a_dead_worker_ends_the_run_saved(tmp_path):
    workers = ["--vec.backend", "multiprocessing", "--vec.num-envs", "2", "--vec.num-workers", "2"]
    err, summary = _fails_cleanly(tmp_path / "run", "faulty/crash", *workers, "--train.num-steps", "32")
    assert "WorkerError" in err and "the simulator crashed after 200 steps" in err
    assert Path(summary["checkpoint"]).name == f"model_{summary['updates']:06d}.pt"  # saved on the way out
    assert Path(summary["checkpoint"]).is_file()


@pytest.mark.slow
def test_a_hung_worker_ends_the_run_saved(tmp_path):
    """A worker stuck in its env's step (it would wait for ever) ends the run once vec.worker_timeout
    passes: saved, one line naming the worker and the key, and no worker left running."""
    workers = ["--vec.backend", "multiprocessing", "--vec.num-envs", "2", "--vec.num-workers", "2"]
    args = ["faulty/hang", *workers, "--train.num-steps", "32", "--vec.worker-timeout", "2"]
    err, summary = _fails_cleanly(tmp_path / "run", *args)
    assert re.search(
        r"WorkerHung: Multiprocessing worker \d \(envs \d-\d, pid \d+\) did not answer within 2 s", err
    )
    assert "raise --vec.worker-timeout" in err
    assert Path(summary["checkpoint"]).is_file()


@pytest.mark.slow
def test_a_nan_loss_is_named_and_not_saved(tmp_path):
    run = tmp_path / "run"
    args = [
        "faulty/nan",
        "--vec.num-envs",
        "2",
        "--train.num-steps",
        "32",
        "--train.checkpoint-interval",
        "1",
    ]
    err, summary = _fails_cleanly(run, *args)
    update = summary["updates"]
    assert f"update {update}: the loss is not finite (policy_loss = nan" in err
    assert summary["checkpoint"] == str(run / f"model_{update - 1:06d}.pt")  # the last good weights
    assert not (run / f"model_{update:06d}.pt").exists()


def test_a_deleted_run_directory(tmp_path):
    run = tmp_path / "run"

    def delete(progress: dict) -> None:
        if progress["update"] == 2:
            shutil.rmtree(run)

    with pytest.raises(failure.TrainingError, match=f"the run directory {run} was deleted") as caught:
        train("ocean/bandit", {**QUICK, "track.tensorboard": False}, run_dir=run, on_update=delete)
    assert caught.value.summary["stop_reason"] == "error" and not run.exists()  # nothing made again
    assert caught.value.summary["checkpoint"] is None  # the checkpoints went with it


@pytest.mark.slow
def test_a_run_directory_deleted_after_its_first_checkpoint_says_nothing_was_saved(tmp_path):
    """The checkpoints went with the folder: the line says so and what to do, and names no checkpoint
    or --resume command (it used to claim "saved RUN/model_….pt; resume with: …")."""
    run = tmp_path / "run"
    args = ["ocean/bandit", "--train.run-dir", str(run), "--train.checkpoint-interval", "1"]
    args += ["--train.stop-when-solved", "false", "--train.total-timesteps", "100000000"]
    proc = _puffer(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _first_checkpoint(run, proc)
        shutil.rmtree(run)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"the run directory {run} was deleted while the run went on, its checkpoints with it" in err
    assert "nothing could be saved and there is nothing to resume; run the same command again" in err
    assert "saved" not in err.replace("could be saved", "") and "resume with" not in err, err


@pytest.fixture
def tiny_disk(tmp_path):
    """A 400 KiB tmpfs: a real full filesystem (as root; skipped only where mount is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.mark.slow
def test_a_full_disk_with_tensorboard_prints_one_line(tiny_disk):
    """The disk fills under TensorBoard's event writer: no writer-thread traceback and no "tracking
    could not finish" lines, only the run's own line (it used to print all three)."""
    run = tiny_disk / "run"
    args = ["classic_control/CartPole-v1", "--train.run-dir", str(run), "--track.tensorboard", "true"]
    proc = _puffer(*args, "--train.stop-when-solved", "false", "--train.total-timesteps", "100000000",
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert list(run.glob("events.out.tfevents.*")), "TensorBoard wrote nothing"
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("puffer train: error: update ") and "No space left on device" in err, err


def test_a_full_disk(tmp_path):
    """A file-size limit fails writes as a full disk does (EFBIG instead of ENOSPC)."""
    run = tmp_path / "run"
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, limits[1]))  # checkpoints are ~240 kB
    try:
        overrides = {**QUICK, "track.tensorboard": False, "train.checkpoint_interval": 2}
        with pytest.raises(failure.TrainingError) as caught:
            train("ocean/bandit", overrides, run_dir=run)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, previous)
    message = str(caught.value)
    assert f"update 2: CheckpointSaveError: cannot save a checkpoint in {run}: File too large (" in message
    assert " free there)" in message and "\n" not in message
    assert caught.value.summary["checkpoint"] is None and not list(run.glob("*.tmp"))
    assert json.loads((run / rundir.SUMMARY).read_text())["stop_reason"] == "error"


@pytest.mark.slow
def test_a_second_ctrl_c_waits_for_the_final_save(tmp_path):
    run = tmp_path / "run"
    args = ["ocean/bandit", "--json", "--train.run-dir", str(run), "--train.checkpoint-interval", "1"]
    args += ["--train.stop-when-solved", "false", "--train.total-timesteps", "100000000"]
    proc = _puffer(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _first_checkpoint(run, proc)
        for _ in range(40):  # Ctrl-C, then keep pressing it through the final save
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGINT)
            time.sleep(0.005)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    summary = json.loads((run / rundir.SUMMARY).read_text())
    assert summary["stop_reason"] == "interrupted" and Path(summary["checkpoint"]).is_file()


STOPPED = ["--json", "--vec.num-envs", "2", "--train.num-steps", "64", "--train.stop-when-solved", "false"]


def _run(run: Path, *args: str, after: int) -> tuple[int, str]:
    """`puffer train faulty/sigterm` into `run`, its envs sending SIGTERM at step `after` (0: at the
    first reset); (exit code, stderr)."""
    proc = _puffer(
        *args, *STOPPED, env={"FAULT_AFTER": str(after)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def _updates(run: Path) -> list[int]:
    return [json.loads(line)["update"] for line in (run / rundir.METRICS).read_text().splitlines()]


@pytest.mark.slow
def test_a_stop_mid_rollout_saves_the_last_finished_update_and_resumes_without_a_gap(tmp_path):
    """SIGTERM inside a rollout: the checkpoint is numbered for the last update that finished and holds
    its steps (not the half rollout's), so metrics.jsonl and the checkpoint agree and the resumed run
    logs the next update number; the stale model_*.tmp a killed save left is removed on resume."""
    from pufferlib.train.run import checkpoint

    run = tmp_path / "run"
    code, err = _run(
        run, "faulty/sigterm", "--train.run-dir", str(run), "--train.checkpoint-interval", "3", after=1000
    )
    assert code == 143, err
    summary = json.loads((run / rundir.SUMMARY).read_text())
    last = json.loads((run / rundir.METRICS).read_text().splitlines()[-1])
    saved = checkpoint.load(summary["checkpoint"])
    assert summary["checkpoint"] == str(run / checkpoint.name(last["update"])), (summary, last)
    assert saved["update"] == saved["resume"]["update"] == summary["updates"] == last["update"]
    assert saved["steps"] == saved["resume"]["steps"] == summary["steps"] == last["global_step"]
    (run / "model_000999.tmp").write_bytes(b"half a checkpoint")  # what a kill during a save leaves
    more = str(last["global_step"] + 3 * 2 * 64)
    code, err = _run(run, "--resume", str(run), "--train.total-timesteps", more, after=10**9)
    assert code == 0, err
    assert _updates(run) == list(range(1, last["update"] + 4))  # no update number skipped
    assert not list(run.glob("*.tmp"))


@pytest.mark.slow
def test_a_run_stopped_before_its_first_update_can_be_resumed(tmp_path):
    """SIGTERM after the run directory was made but before any update: no checkpoint, and --resume
    starts the run again from its config in its folder (it used to say "no checkpoint there", while a
    new run there said "already holds a run; continue it with --resume")."""
    run = tmp_path / "run"
    code, err = _run(run, "faulty/sigterm", "--train.run-dir", str(run), after=0)
    assert code == 143 and "stopped by SIGTERM before training began" in err, err
    assert (run / rundir.CONFIG).is_file() and not list(run.glob("model_*.pt"))
    code, err = _run(run, "--resume", str(run), "--train.total-timesteps", str(4 * 2 * 64), after=10**9)
    assert code == 0, err
    assert _updates(run) == [1, 2, 3, 4] and list(run.glob("model_*.pt"))
    assert json.loads((run / rundir.SUMMARY).read_text())["stop_reason"] == "steps"


def test_hold_keeps_signals_until_released():
    hold = signals.Hold()
    hold.start()
    os.kill(os.getpid(), signal.SIGINT)  # delivered now, but only noted
    time.sleep(0.01)
    with pytest.raises(signals.Interrupted) as caught:
        hold.release()
    assert caught.value.after_save and caught.value.signal_name == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    hold.release()  # once is enough


def test_two_runs_cannot_share_a_run_directory(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    held = rundir.Lock(run)  # what a running `puffer train --train.run-dir run` holds
    try:
        assert main(["train", "ocean/bandit", "--json", "--train.run-dir", str(run)]) == 2
    finally:
        held.release()
    err = capsys.readouterr().err
    assert f"run directory {run} is in use by another run (pid {os.getpid()})" in err
    assert not (run / rundir.CONFIG).exists() and not (run / rundir.LOCK).exists()


def test_a_config_toml_that_no_run_wrote_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "config.toml").write_text('[tool.mine]\nkeep = "me"\n')
    assert main(["train", "ocean/bandit", "--json", "--train.run-dir", str(tmp_path)]) == 2
    assert "not a run's; refusing to overwrite it" in capsys.readouterr().err
    assert (tmp_path / "config.toml").read_text() == '[tool.mine]\nkeep = "me"\n'


@pytest.mark.parametrize(
    "bad",
    [
        ["--vec.num-envs", "0"],
        ["--vec.num-envs", "3", "--vec.batch-size", "2"],
        ["--train.learning-rate", "-1"],
    ],
    ids=["num-envs-0", "batch-size", "learning-rate"],
)
def test_no_run_directory_until_the_run_is_built(tmp_path, capsys, bad):
    assert main(["train", "ocean/bandit", "--train.run-dir", str(tmp_path / "run"), *bad]) != 0
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
