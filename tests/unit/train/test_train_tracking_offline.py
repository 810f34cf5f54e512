"""`puffer train --track wandb|neptune` with no network at all (a namespace holding only loopback):
W&B's offline mode and Neptune's keep the config, every update under CleanRL's metric names and the
final checkpoint, for `wandb sync` / `neptune sync` later; stdout still carries only the summary."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import sys
from pathlib import Path

import pytest
from _offline import offline
from _repo import REPO
from _strict import skip_or_fail

PUFFER = str(Path(sys.executable).with_name("puffer"))
TRAIN = ["train", "ocean/bandit", "--json", "--vec.num-envs", "8", "--train.total-timesteps", "30000"]

pytestmark = pytest.mark.slow  # a short training in a fresh process each, ~10-20 s


def test_the_namespace_has_no_network(tmp_path):
    probe = (
        "import socket\n"
        "server = socket.create_server(('127.0.0.1', 0)); socket.create_connection(server.getsockname())\n"
        "try:\n    socket.create_connection(('1.1.1.1', 443), timeout=5)\nexcept OSError as e:\n"
        "    print('unreachable', e.errno)\nelse:\n    print('reachable')\n"
    )
    proc = offline([sys.executable, "-c", probe], timeout=60)
    assert proc.returncode == 0, proc.stderr  # loopback works (W&B's service needs it)
    assert proc.stdout.startswith("unreachable"), proc.stdout


def wandb_records(path: Path) -> list:
    """The records of an offline run's .wandb file: W&B's header, then LevelDB-style log chunks
    (crc32, length, type; FULL=1, FIRST=2, MIDDLE=3, LAST=4) in 32 KiB blocks, each a protobuf Record."""
    from wandb.proto import wandb_internal_pb2

    data, block = path.read_bytes(), 32768
    assert data[:4] == b":W&B", data[:8]
    pos, pending, records = 7, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0:
            pos += block - pos % block
            continue
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def items(entries) -> dict:
    """W&B's key/value items (a key with slashes may come as nested_key) as a dict."""
    return {entry.key or "/".join(entry.nested_key): json.loads(entry.value_json) for entry in entries}


def test_wandb_offline(tmp_path):
    if importlib.util.find_spec("wandb") is None:
        skip_or_fail("wandb is not installed: pip install 'pufferlib[wandb]'")
    run_dir = tmp_path / "run"
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        **{f"WANDB_{name}_DIR": str(tmp_path / name.lower()) for name in ("CONFIG", "CACHE", "DATA")},
    }
    proc = offline(
        [PUFFER, *TRAIN, "--track", "wandb", "--train.run-dir", str(run_dir)], env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # nothing but the summary on stdout
    [log] = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    records = wandb_records(log)
    kinds = [r.WhichOneof("record_type") for r in records]

    history = [items(r.history.item) for r in records if r.history.item]
    assert len(history) == summary["updates"]
    names = {"charts/episodic_return", "charts/SPS", "losses/value_loss", "losses/approx_kl"}
    assert names <= set(history[-1])
    steps = [h["global_step"] for h in history]
    assert steps == sorted(steps) and steps[-1] == summary["steps"]

    [run] = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    config = items(run.config.update)
    assert config["train.learning_rate"] == 1e-3 and config["vec.num_envs"] == 8

    [artifact] = [r.artifact for r in records if r.WhichOneof("record_type") == "artifact"]
    assert artifact.type == "model"
    assert [entry.path for entry in artifact.manifest.contents] == [Path(summary["checkpoint"]).name]
    [done] = [r.exit for r in records if r.WhichOneof("record_type") == "exit"]
    assert done.exit_code == 0 and kinds[-1] in ("exit", "final", "footer", "summary")


def test_wandb_resume_logs_to_the_same_run(tmp_path):
    """`puffer train --resume` logs to the W&B run of the first session (its id is in the run dir)."""
    if importlib.util.find_spec("wandb") is None:
        skip_or_fail("wandb is not installed: pip install 'pufferlib[wandb]'")
    run_dir = tmp_path / "run"
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        "PYTHONPATH": str(REPO),  # this checkout's pufferlib
        **{f"WANDB_{name}_DIR": str(tmp_path / name.lower()) for name in ("CONFIG", "CACHE", "DATA")},
    }
    puffer = [sys.executable, "-m", "pufferlib.cli"]
    first = offline(
        [*puffer, *TRAIN, "--track", "wandb", "--train.run-dir", str(run_dir)], env=env, timeout=600
    )
    assert first.returncode == 0, first.stderr
    more = ["--train.total-timesteps", "40000", "--train.stop-when-solved", "false"]
    again = offline([*puffer, "train", "--json", "--resume", str(run_dir), *more], env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    run_id = (run_dir / "wandb_id.txt").read_text().strip()
    logs = sorted(run_dir.glob("wandb/offline-run-*/run-*.wandb"))
    assert len(logs) == 2 and all(log.name == f"run-{run_id}.wandb" for log in logs)
    steps = [
        [items(r.history.item)["global_step"] for r in wandb_records(log) if r.history.item] for log in logs
    ]
    assert steps[0][-1] == json.loads(first.stdout)["steps"] < steps[1][0]  # the steps go on
    assert steps[1][-1] == json.loads(again.stdout)["steps"] >= 40000


def test_neptune_offline(tmp_path):
    if importlib.util.find_spec("neptune") is None:
        skip_or_fail("neptune is not installed: pip install 'pufferlib[neptune]'")
    run_dir = tmp_path / "run"
    env = {**os.environ, "NEPTUNE_MODE": "offline"}
    cmd = [PUFFER, *TRAIN, "--track", "neptune", "--train.run-dir", str(run_dir)]
    proc = offline(cmd, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # Neptune's own messages went to stderr
    [log] = tmp_path.glob(".neptune/offline/run__*/data-1.log")
    ops = [json.loads(line)["obj"] for line in log.read_text().splitlines() if line.strip()]
    appended = [op for op in ops if op["path"] == ["charts", "episodic_return"]]
    assert sum(len(op.get("values", [op])) for op in appended) == summary["updates"]
    assigned = {tuple(op["path"]): op.get("value") for op in ops if op["type"].startswith("Assign")}
    assert assigned[("config", "train", "learning_rate")] == 1e-3
    assert assigned[("summary", "solved")] is True
    [upload] = [op for op in ops if op["type"] == "UploadFile"]
    assert upload["path"] == ["model", "checkpoint"]
    assert Path(upload["file_path"]).resolve() == (tmp_path / summary["checkpoint"]).resolve()
