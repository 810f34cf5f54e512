"""What a training or evaluation run is built from: the vector env, the policy, the device.

Training (ppo.py) and evaluation (evaluation.py) both start here, so a checkpoint is always
played on the env and policy its config describes. Later additions that change how a run is set
up (observation normalisation, a distributed device per rank) belong here, not in the PPO loop.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import os
import shutil
import warnings
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
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo import memory


def make_vecenv(binding: envs.Binding, cfg: Config):
    """The vector env `cfg['vec']` asks for, seeded with train.seed (env i gets seed + i), behind
    normalize.VecNormalize when `cfg['normalize']` turns observation or reward normalisation on."""
    import pufferlib.vector
    from pufferlib.train.ppo import normalize

    vec = cfg["vec"]
    backend = "pufferenv" if vec["backend"] == "native" else vec["backend"]
    kwargs: dict[str, Any] = {}
    if backend != "pufferenv":
        kwargs = {"zero_copy": vec["zero_copy"], "overwork": vec["overwork"]}
        if vec["num_workers"]:
            kwargs["num_workers"] = vec["num_workers"]
        if vec["batch_size"]:
            kwargs["batch_size"] = vec["batch_size"]
        if backend == "multiprocessing" and "worker_timeout" in vec:  # a run from before the key lacks it
            kwargs["worker_timeout"] = vec["worker_timeout"]
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


def make_policy(
    binding: envs.Binding, env: pufferlib.PufferEnv, cfg: Config, device: str = "cpu", copies: int = 4
) -> nn.Module:
    """binding's policy class (+ LSTMWrapper when rnn.enabled) in CleanRL's API; the env's action
    mask, if its observations carry one, is honoured whatever the policy class.

    `[policy]` is checked first, as `[env]` is: an unknown key or a value of the wrong type is a
    ConfigError naming the key and what the class takes; so is a policy that the class refuses
    (hidden_size -4), that has a layer with no weights (hidden_size 0) or whose `copies` of its
    weights (4 to train: weights, gradients, Adam's two moments) do not fit in `device`'s free memory,
    measured on a weightless ("meta") build before anything is allocated."""
    cls = binding.policy_class()
    kwargs = policy_kwargs(cls, cfg["policy"])
    meta = None
    with contextlib.suppress(Exception), warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")  # torch warns of zero-element layers: refused below instead
        meta = _policy(cls, env, kwargs, cfg)  # a class that cannot build without data: the real build says
    if meta is not None:
        _check_policy_size(binding, meta, kwargs, device, copies)
    try:
        policy = _policy(cls, env, kwargs, cfg)
    except (TypeError, ValueError, RuntimeError) as e:
        if not kwargs:  # the class's own defaults failed: not the user's to fix
            raise
        raise ConfigError(
            f"{binding.name}: could not make the policy with [policy] {_show(kwargs)}: {e}"
        ) from e
    if meta is None:
        _check_policy_size(binding, policy, kwargs, device, 0)
    return policy


def _policy(cls: type, env: pufferlib.PufferEnv, kwargs: dict[str, Any], cfg: Config) -> nn.Module:
    module = cls(env, **kwargs)
    if cfg["rnn"]["enabled"]:
        hidden = getattr(module, "hidden_size", 128)
        return RecurrentPolicy(LSTMWrapper(env, module, input_size=hidden, hidden_size=hidden), env)
    return Policy(module, env)


def policy_kwargs(cls: type, given: dict[str, Any]) -> dict[str, Any]:
    """`[policy]` as keyword arguments of `cls(env, ...)`: each key one that it takes (unless it takes
    **kwargs), each value converted to the type of that parameter's default (as config keys are)."""
    params = list(inspect.signature(cls).parameters.values())[1:]  # after env
    named = {p.name: p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
    out = {}
    for key, value in given.items():
        param = named.get(key)
        if param is None and not takes_any:
            close = difflib.get_close_matches(key, list(named), n=1)
            hint = f" Did you mean policy.{close[0]}?" if close else ""
            takes = ", ".join(f"{n} (default {p.default!r})" for n, p in named.items()) or "nothing"
            raise ConfigError(f"[policy]: unknown key policy.{key}.{hint} {cls.__name__} takes {takes}")
        default = None if param is None else param.default
        if isinstance(default, bool | int | float | str):
            value = configuration.convert(value, default, f"policy.{key}", "[policy]")
        out[key] = value
    return out


def _check_policy_size(
    binding: envs.Binding, policy: nn.Module, kwargs: dict[str, Any], device: str, copies: int
) -> None:
    """ConfigError for a layer with no weights, or for `copies` of the weights (and one on the host,
    where the policy is built) beyond the free memory; copies=0 checks only the layers."""
    made = f"{binding.name}: the policy made with [policy] {_show(kwargs)}"
    empty = [name for name, p in policy.named_parameters() if p.numel() == 0]
    if empty:
        raise ConfigError(
            f"{made} has layers with no weights ({', '.join(empty[:3])}): every size must be >= 1"
        )
    weights = sum(p.numel() * p.element_size() for p in policy.parameters())
    for where, need in (("cpu", weights), (device, copies * weights)) if copies else ():
        free = memory.available(where)
        if free is not None and need > free:
            raise ConfigError(
                f"{made} needs {memory.size(need)} on {where} (its weights"
                + (f" x{copies}: gradients and Adam's moments too" if need > weights else "")
                + f"), which has {memory.size(free)} free: lower its sizes"
            )


def _show(kwargs: dict[str, Any]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in kwargs.items()) or "(the defaults)"


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
