"""The launch flags become torchrun's command line, bad ones are clear errors, and each rank gets
its own seeds and device. No processes are started here."""

from __future__ import annotations

import argparse

import pytest
import torch

from pufferlib.cli import main
from pufferlib.train import config as configuration
from pufferlib.train.config import ConfigError
from pufferlib.train.scale.distributed import Ranks, torchrun_args
from pufferlib.train.setup import resolve_device


def flags(**given) -> argparse.Namespace:
    values = dict.fromkeys(("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port"))
    return argparse.Namespace(**{**values, **given})


def test_one_node_gets_a_free_port_and_the_ranks_run_puffer_train():
    argv = torchrun_args(flags(nproc_per_node="2"), ["ocean/squared", "--json"])
    assert "--standalone" in argv and "--master-addr" not in argv
    assert argv[argv.index("--nproc-per-node") + 1] == "2" and argv[argv.index("--max-restarts") + 1] == "0"
    assert argv[-5:] == ["-m", "pufferlib.cli", "train", "ocean/squared", "--json"]


def test_two_nodes_rendezvous_at_node_0():
    node_a = "box-a.tail1234.ts.net"
    args = flags(nproc_per_node="1", nnodes=2, node_rank=1, master_addr=node_a, master_port=29400)
    argv = torchrun_args(args, ["ocean/squared"])
    assert "--standalone" not in argv
    for flag, value in [
        ("--nnodes", "2"),
        ("--node-rank", "1"),
        ("--master-addr", node_a),
        ("--master-port", "29400"),
    ]:
        assert argv[argv.index(flag) + 1] == value


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"nnodes": 2}, "--nnodes 2 needs --master-addr"),
        ({"nnodes": 2, "node_rank": 2, "master_addr": "a"}, r"--node-rank must be in 0\.\.1"),
        ({"nnodes": 0}, "--nnodes must be >= 1"),
    ],
)
def test_bad_launch_flags_are_clear_errors(given, message):
    with pytest.raises(ConfigError, match=message):
        torchrun_args(flags(**given), ["ocean/squared"])


def test_launch_flags_inside_torchrun_are_refused(monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["train", "ocean/squared", "--nproc-per-node", "2"]) == 2
    assert "inside torchrun" in capsys.readouterr().err


def test_the_cli_says_what_is_wrong_before_starting_torchrun(capsys):
    assert main(["train", "ocean/squared", "--nnodes", "2"]) == 2
    err = capsys.readouterr().err
    assert "needs --master-addr" in err and "MagicDNS" in err and "Traceback" not in err


def test_each_rank_seeds_envs_no_other_rank_uses():
    cfg = configuration.load("ocean/squared")  # 32 envs: env i gets seed + i
    seeds = set()
    for rank in range(3):
        ranks = Ranks.__new__(Ranks)  # only rank_config is used: no process group needed
        ranks.rank = rank
        mine = ranks.rank_config(cfg)
        start, count = mine["train"]["seed"], mine["vec"]["num_envs"]
        assert not seeds & set(range(start, start + count))
        seeds |= set(range(start, start + count))
    assert cfg["train"]["seed"] == 1, "rank 0 keeps the config as given (its checkpoint records it)"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answers")
def test_a_rank_on_a_cpu_node():
    assert resolve_device("auto", local_rank=1) == "cpu"
    assert resolve_device("cpu", local_rank=3) == "cpu"
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        resolve_device("cuda", local_rank=0)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to torch")
def test_a_rank_on_a_gpu_node_uses_its_local_gpu():
    assert resolve_device("auto", local_rank=0) == "cuda:0"
    assert resolve_device("cuda", local_rank=torch.cuda.device_count() - 1).startswith("cuda:")
    with pytest.raises(ConfigError, match="--nproc-per-node gpu"):
        resolve_device("cuda", local_rank=torch.cuda.device_count())
