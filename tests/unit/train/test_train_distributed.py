"""`puffer train` under torchrun on this host: two CPU ranks over gloo, real processes, real signals.

Two ranks solve ocean/squared with global counts and identical replicas, and the checkpoint loads
in `puffer eval` on one CPU process; an LSTM policy with PPO's target_kl early stop (a decision
the ranks must take alike) runs a fixed number of updates; SIGTERM on the launcher saves rank 0's
checkpoint; a killed rank stops the job with an error naming it; ranks that never meet time out.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pufferlib.cli import main

pytestmark = pytest.mark.slow

PUFFER = [sys.executable, "-m", "pufferlib.cli"]
TWO_RANKS = ["--nproc-per-node", "2"]
# runs until stopped, saving after every update: a checkpoint on disk means the loop is running
FOREVER = ["--train.stop-when-solved", "false", "--train.total-timesteps", "100000000"]
FOREVER += ["--train.checkpoint-interval", "1"]


def summary_of(stdout: str) -> dict:
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, f"rank 0 alone prints: expected one JSON line, got {lines}"
    return json.loads(lines[0])


def workers(token: str) -> dict[int, int]:
    """{rank: pid} of the torchrun workers whose command line holds `token`."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        rank = [e for e in environ if e.startswith(b"RANK=")]
        if any(token.encode() in part for part in cmdline) and rank and b"pufferlib.cli" in cmdline:
            found[int(rank[0].split(b"=")[1])] = int(proc.name)
    return found


def start(argv: list[str], new_session: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [*PUFFER, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,  # its own process group, for a Ctrl-C sent to the group
    )


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"no {what} within {timeout} s")


def test_two_ranks_solve_and_the_checkpoint_loads_on_one_cpu_process(tmp_path, capsys):
    argv = ["train", "ocean/squared", "--json", *TWO_RANKS, "--train.run-dir", f"{tmp_path}/{{time}}-{{id}}"]
    done = subprocess.run([*PUFFER, *argv], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = summary_of(done.stdout)
    assert summary["world_size"] == 2 and summary["backend"] == "gloo"
    assert summary["solved"] and summary["stop_reason"] == "solved", summary
    assert summary["replicas_identical"] is True
    # global counts: every update collects 32 envs x 32 steps on each of the 2 ranks
    assert summary["steps"] >= 2 * 32 * 32 * summary["updates"]
    assert summary["sps"] == pytest.approx(summary["steps"] / summary["seconds"], rel=0.01)
    assert "rank 0 of 2" in done.stderr and "rank 1 of 2" in done.stderr
    saved = Path(summary["checkpoint"])
    assert saved.parent.parent == tmp_path and [p.name for p in tmp_path.iterdir()] == [saved.parent.name]

    assert main(["eval", "ocean/squared", "--checkpoint", str(saved), "--episodes", "50", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["episodes"] == 50 and result["solved"], result


def test_one_rank_under_torchrun_is_a_process_group_of_one_in_ddp():
    """`--nproc-per-node 1` joins a group of one and trains in DDP (on a GPU: NCCL; tests/gpu/run.sh's
    ddp step), rather than running as if torchrun were not there."""
    argv = ["train", "ocean/squared", "--json", "--nproc-per-node", "1", "--train.run-dir", ""]
    done = subprocess.run(
        [*PUFFER, *argv, "--train.device", "cpu"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    summary = summary_of(done.stdout)
    assert summary["world_size"] == 1 and summary["backend"] == "gloo" and summary["solved"], summary
    assert summary["replicas_identical"] is True and "rank 0 of 1" in done.stderr


def test_lstm_and_target_kl_run_in_lockstep_and_end_identical(tmp_path):
    """ocean/memory (an LSTM through DDP's forward) with an early stop on approx KL that each rank
    would otherwise take on its own minibatches: a fixed step budget ends both ranks together."""
    argv = ["train", "ocean/memory", "--json", *TWO_RANKS, "--train.run-dir", ""]
    argv += [
        "--train.stop-when-solved",
        "false",
        "--train.total-timesteps",
        "5000",
        "--train.target-kl",
        "1e-4",
    ]
    done = subprocess.run([*PUFFER, *argv], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = summary_of(done.stdout)
    # 2 ranks x 32 envs x 32 steps = 2048 global steps per update: 5000 takes 3 updates
    assert summary["updates"] == 3 and summary["stop_reason"] == "steps", summary
    assert summary["replicas_identical"] is True


REPLICAS = """
import sys, torch, torch.distributed as dist
from pufferlib.train.scale.distributed import replicas_identical
dist.init_process_group("gloo")
torch.manual_seed(0)
same = replicas_identical(torch.nn.Linear(4, 2))
torch.manual_seed(dist.get_rank())
different = replicas_identical(torch.nn.Linear(4, 2))
with open(f"{sys.argv[1]}/rank{dist.get_rank()}", "w") as report:
    report.write(f"{same} {different}")
dist.destroy_process_group()
"""


def test_the_replica_check_goes_red_when_weights_differ(tmp_path):
    script = tmp_path / "replicas.py"
    script.write_text(REPLICAS)
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    done = subprocess.run(
        [*launch, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # each rank writes its own file: on the shared stdout pipe their lines could interleave mid-line
    reports = [(tmp_path / f"rank{rank}").read_text() for rank in (0, 1)]
    assert reports == ["True False", "True False"], done.stdout


@pytest.mark.parametrize(
    ("sig", "group", "code"),
    [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
    ids=["SIGTERM-to-the-launcher", "Ctrl-C-to-the-process-group"],
)
def test_a_stop_signal_saves_rank_0s_checkpoint(tmp_path, sig, group, code):
    """Ctrl-C in a terminal signals the whole process group: the ranks get it twice (from the
    terminal, then from torchrun) and the second must not interrupt rank 0's save."""
    argv = [
        "train",
        "ocean/squared",
        "--json",
        *TWO_RANKS,
        *FOREVER,
        "--train.run-dir",
        f"{tmp_path}/{{time}}-{{id}}",
    ]
    proc = start(argv, new_session=group)
    try:
        wait_for(lambda: list(tmp_path.glob("*/model_*.pt")), 180, "checkpoint")
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    summary = summary_of(out)
    assert summary["stop_reason"] == "interrupted" and summary["signal"] == sig.name
    assert Path(summary["checkpoint"]).is_file()
    assert workers(str(tmp_path)) == {}, "a rank outlived the launcher"


def test_a_killed_rank_stops_the_job_with_an_error_naming_it(tmp_path):
    proc = start(
        ["train", "ocean/squared", *TWO_RANKS, *FOREVER, "--train.run-dir", f"{tmp_path}/{{time}}-{{id}}"]
    )
    try:
        wait_for(lambda: list(tmp_path.glob("*/model_*.pt")), 180, "checkpoint")
        ranks = workers(str(tmp_path))
        os.kill(ranks[1], signal.SIGKILL)
        killed = time.monotonic()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "rank 1 (host" in err and "failed: SIGKILL" in err, err
    assert time.monotonic() - killed < 60  # torchrun's monitor and its 30 s shutdown grace at most
    assert workers(str(tmp_path)) == {}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ranks_that_never_meet_time_out_with_the_fix():
    env = dict(os.environ, RANK="0", LOCAL_RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1")
    env["MASTER_PORT"] = str(free_port())
    argv = ["train", "ocean/bandit", "--train.dist-timeout", "3", "--train.run-dir", ""]
    started = time.monotonic()
    done = subprocess.run([*PUFFER, *argv], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1, done.stderr
    assert "not all 2 ranks joined" in done.stderr and "--master-addr" in done.stderr, done.stderr
    assert time.monotonic() - started < 60


def test_the_heartbeat_has_stopped_when_stop_returns(monkeypatch):
    """A heartbeat thread left running can be inside the store's C++ call when the interpreter exits,
    which aborts the rank (SIGABRT) after its work is done: stop() waits for the thread."""
    import threading

    import torch.distributed as dist

    from pufferlib.train.scale.distributed import Heartbeat

    store = dist.TCPStore("127.0.0.1", 0, world_size=1, is_master=True, wait_for_workers=False)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(store.port))
    heart = Heartbeat(rank=0, world_size=1)
    wait_for(lambda: store.add("puffer/beat/0", 0) >= 2, timeout=30, what="second heartbeat")
    heart.stop()
    assert "puffer-heartbeat" not in [thread.name for thread in threading.enumerate()]
