"""What a training or evaluation run is built from: the vector env, the policy, the device.

Training (ppo.py) and evaluation (evaluation.py) both start here, so a checkpoint is always
played on the env and policy its config describes. Later additions that change how a run is set
up (observation normalisation, a distributed device per rank) belong here, not in the PPO loop.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn

import pufferlib
import pufferlib.environments as envs
from pufferlib.frameworks.cleanrl import Policy, RecurrentPolicy
from pufferlib.models import LSTMWrapper
from pufferlib.pytorch import default_device
from pufferlib.train import config as configuration
from pufferlib.train import memory
from pufferlib.train.config import Config, ConfigError


def make_vecenv(binding: envs.Binding, cfg: Config):
    """The vector env `cfg['vec']` asks for, seeded with train.seed (env i gets seed + i), behind
    normalize.VecNormalize when `cfg['normalize']` turns observation or reward normalisation on."""
    import pufferlib.vector
    from pufferlib.train import normalize

    vec = cfg["vec"]
    backend = "pufferenv" if vec["backend"] == "native" else vec["backend"]
    kwargs: dict[str, Any] = {}
    if backend != "pufferenv":
        kwargs = {"zero_copy": vec["zero_copy"], "overwork": vec["overwork"]}
        if vec["num_workers"]:
            kwargs["num_workers"] = vec["num_workers"]
        if vec["batch_size"]:
            kwargs["batch_size"] = vec["batch_size"]
    env_kwargs, num_envs = dict(cfg["env"]), vec["num_envs"]
    if binding.native and backend == "pufferenv":  # one PufferEnv steps vec.num_envs C instances itself
        env_kwargs.update(num_envs=num_envs, num_threads=vec["num_threads"])
        num_envs = 1
    try:
        vecenv = pufferlib.vector.make(
            binding.env_creator(),
            env_kwargs=env_kwargs,
            backend=backend,
            num_envs=num_envs,
            seed=cfg["train"]["seed"],
            **kwargs,
        )
    except (TypeError, ValueError) as e:  # an [env] keyword the env does not take, or a value it refuses
        raise ConfigError(f"{binding.name}: could not make the env with [env] {cfg['env']}: {e}") from e
    return normalize.wrap(vecenv, cfg)


def make_policy(binding: envs.Binding, env: pufferlib.PufferEnv, cfg: Config) -> nn.Module:
    """binding's policy class (+ LSTMWrapper when rnn.enabled) in CleanRL's API; the env's action
    mask, if its observations carry one, is honoured whatever the policy class."""
    module = binding.policy_class()(env, **cfg["policy"])
    if cfg["rnn"]["enabled"]:
        hidden = getattr(module, "hidden_size", 128)
        return RecurrentPolicy(LSTMWrapper(env, module, input_size=hidden, hidden_size=hidden), env)
    return Policy(module, env)


def solve_score(binding: envs.Binding, cfg: Config) -> float | None:
    """The score that counts as solved: train.solve_score, or (0, the default) the binding's own
    solved return (win_rate: none); None = never solved (the run goes on to its budget)."""
    tc = cfg["train"]
    if tc["solve_score"]:
        return tc["solve_score"]
    return binding.solved if tc["solve_metric"] == "return" else None


def resolve_device(requested: str, local_rank: int | None = None) -> str:
    """train.device: auto (cuda when torch sees a GPU), cpu, cuda or cuda:N. For a rank of a
    distributed job (`local_rank` given, from torchrun's LOCAL_RANK) auto and cuda mean that rank's
    own GPU, cuda:LOCAL_RANK."""
    try:
        device = default_device(requested)
    except RuntimeError:
        raise ConfigError(
            f"train.device is {requested!r} but torch sees no CUDA GPU here; use --train.device cpu (or auto)"
        ) from None
    if local_rank is None or device != "cuda":
        return device
    if local_rank >= torch.cuda.device_count():
        raise ConfigError(
            f"LOCAL_RANK {local_rank} but torch sees {torch.cuda.device_count()} GPU(s) on this node: "
            "run at most that many ranks per node (--nproc-per-node gpu), or --train.device cpu"
        )
    return f"cuda:{local_rank}"


def check_compile(device: str) -> None:
    """train.compile on the CPU: torch.compile's code generator (inductor) writes C++ and builds it at run
    time, with a C++ compiler and torch's headers. The cpu image has the compiler (the lib layer's
    build-essential) but not the headers (docs/images.md), so say what is missing before training
    starts rather than in a traceback at the first forward pass."""
    if not device.startswith("cpu"):
        return
    lacking = []
    if not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        lacking.append("a C++ compiler (g++, c++ or clang++ on PATH, or CXX)")
    if not (Path(torch.__file__).parent / "include" / "ATen").is_dir():
        lacking.append("torch's C++ headers (torch/include)")
    if lacking:
        raise ConfigError(
            "train.compile on the CPU needs " + " and ".join(lacking) + ", which this environment lacks "
            "(the cpu image ships without torch's headers): train without --train.compile, or on a GPU "
            "(the cuda image)"
        )


def check_config(cfg: Config) -> None:
    """Every value in its range (config.check: a config built in Python bypasses config.load), the
    relations between values that the per-key checks cannot see, a rollout that fits in memory
    (a lower bound: the env's spaces are not known before its vector env is built), and threads,
    workers and envs within the machine's limits (check_machine)."""
    configuration.check(cfg)
    tc = cfg["train"]
    if cfg["rnn"]["enabled"] and tc["num_steps"] % tc["bptt_horizon"]:
        raise ConfigError(
            f"train.bptt_horizon ({tc['bptt_horizon']}) must divide train.num_steps ({tc['num_steps']}) "
            "when rnn.enabled"
        )
    try:
        device = default_device(tc["device"])
    except RuntimeError:  # cuda without a GPU: resolve_device says so
        device = None
    if device is not None:
        layout = memory.rollout_layout(
            cfg["vec"]["num_envs"], tc["num_steps"], memory.SMALLEST_OBS, memory.SMALLEST_ACTION
        )
        memory.check(layout, device, at_least=True)
    check_machine(cfg)


# The most of each key per CPU this process may use (affinity and cgroup quota: autotune.usable_cpus).
# Threads and processes past a few per CPU only time-slice: 100,000 torch threads crashed the trainer
# and starved the machine of processes. vec.num_envs counts envs the trainer builds one by one as
# Python objects (the native backend's C instances are bounded by the rollout's memory check instead);
# under ray the workers and envs may be on other machines, so only the threads are bounded there.
PER_CPU = {"train.torch_threads": 4, "vec.num_threads": 4, "vec.num_workers": 4, "vec.num_envs": 1024}


def check_machine(cfg: Config, cpus: int | None = None) -> None:
    """ConfigError naming the first key of PER_CPU above its limit on this machine (`cpus`: the usable
    CPUs, found when None), with the limit and how it was derived."""
    from pufferlib.vector.autotune import usable_cpus

    cpus = cpus or usable_cpus()
    backend = cfg["vec"]["backend"]
    for dotted, per_cpu in PER_CPU.items():
        section, _, key = dotted.partition(".")
        if key in ("num_workers", "num_envs") and backend in ("native", "pufferenv", "ray"):
            continue
        value, limit = cfg[section].get(key, 0), per_cpu * cpus
        if value > limit:
            raise ConfigError(
                f"{dotted} is {value:,}, more than this machine's limit of {limit:,} ({per_cpu:,} per CPU, "
                f"{cpus} CPU{'s' * (cpus > 1)} usable here): use at most {limit:,}"
            )


@contextlib.contextmanager
def torch_settings(threads: int) -> Iterator[None]:
    """Process-wide torch settings for the run, restored afterwards."""
    previous_threads = torch.get_num_threads()
    previous_validate = torch.distributions.Distribution._validate_args
    try:
        if threads > 0:
            torch.set_num_threads(threads)
        # Argument validation re-checks on every call what sampling from our own logits already
        # guarantees, and costs about a quarter of the sampling time.
        torch.distributions.Distribution.set_default_validate_args(False)
        yield
    finally:
        torch.set_num_threads(previous_threads)
        torch.distributions.Distribution.set_default_validate_args(previous_validate)
