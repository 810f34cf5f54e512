"""autotune: measure the env on this machine and say which vector configuration steps it fastest.

    config = pufferlib.vector.autotune(env_creator, batch_size=16)   # prints what it measures
    vecenv = pufferlib.vector.make(env_creator, **config)

PufferLib's signature and habits: it profiles one env (steps/s, step-time spread, share of time in
resets, memory per env, observation bandwidth), caps the env count by memory, then runs each
candidate for `time_per_test` seconds and prints its steps/s. The candidates, for `batch_size` envs
per batch: Serial; synchronous Multiprocessing with every worker count up to the physical cores
that divides the batch; and EnvPool-style Multiprocessing with two and three batches' worth of envs
(zero_copy on and off). Timed: only send and recv (what a trainer waits for); `model_forward_s`
sleeps between them, as a policy's forward pass would, so asynchronous configurations can hide
env time behind it. Returns the fastest configuration as keyword arguments of `make`.

`physical_cores()` is the machine's side: the cores this process may use, which also caps
Multiprocessing's default (and allowed) worker count.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pufferlib import APIUsageError, PufferEnv
from pufferlib.spaces import sample_action
from pufferlib.vector.creators import build_env, normalize_creators
from pufferlib.vector.layout import check_layout, divisors


def autotune(
    env_creator: Callable[..., Any],
    batch_size: int,
    max_envs: int = 194,
    model_forward_s: float = 0.0,
    max_env_ram_gb: float = 32,
    max_batch_vram_gb: float = 0.05,
    time_per_test: float = 5.0,
    env_args: tuple | None = None,
    env_kwargs: dict | None = None,
    seed: int = 0,
    quiet: bool = False,
) -> dict[str, Any]:
    """Print each candidate's agent steps/s and return the fastest as `make` keyword arguments:
    backend, num_envs, num_workers, batch_size, zero_copy (`batch_size` counts envs, as in make)."""
    _check(
        env_creator, batch_size, max_envs, model_forward_s, max_env_ram_gb, max_batch_vram_gb, time_per_test
    )
    say = (lambda *a: None) if quiet else print
    creators = normalize_creators(env_creator, env_args, env_kwargs, 1)
    profile = _profile(creators, seed, time_per_test)
    batch_gb = profile["obs_bytes"] * batch_size / 1e9
    if batch_gb > max_batch_vram_gb:
        raise APIUsageError(
            f"a batch of {batch_size} envs holds {batch_gb:.3g} GB of observations, more than "
            f"max_batch_vram_gb={max_batch_vram_gb}: use a smaller batch_size or raise max_batch_vram_gb"
        )
    cores = physical_cores()
    say(f"Profiled one env for ~{time_per_test:g} s on {cores} physical cores:")
    agents = f"{profile['agents']} agent{'s' if profile['agents'] != 1 else ''} per env"
    say(f"    steps/s: {profile['sps']:,.0f} agent steps ({agents})")
    say(f"    step time spread: {profile['std_percent']:.1f}% (std / mean)")
    say(f"    resets: {profile['reset_percent']:.1f}% of the time")
    say(
        f"    memory: {profile['ram_mb']:.1f} MB per env"
        if profile["ram_mb"] is not None
        else "    memory: unknown"
    )
    say(f"    bandwidth: {profile['obs_bytes'] * profile['sps'] / 1e9:.4f} GB/s of observations per core")
    if profile["ram_mb"]:
        by_ram = int(max_env_ram_gb * 1000 // profile["ram_mb"])
        if by_ram < max_envs:
            say(f"Reducing max_envs to {by_ram} to fit max_env_ram_gb={max_env_ram_gb}")
            max_envs = by_ram
    if max_envs < batch_size:
        raise APIUsageError(
            f"only {max_envs} envs fit in max_env_ram_gb={max_env_ram_gb} ({profile['ram_mb']:.0f} MB per "
            f"env), fewer than batch_size={batch_size}: lower batch_size or raise max_env_ram_gb"
        )
    results = []
    for config in candidates(batch_size, max_envs, cores):
        say()
        say("  " + ", ".join(f"{k}={v}" for k, v in config.items()))
        try:
            sps = _measure(creators, config, seed, time_per_test, model_forward_s)
        except Exception as e:  # a candidate that fails is reported and skipped, never the tuning
            say(f"    failed: {type(e).__name__}: {e}")
            continue
        say(f"    {sps:,.0f} agent steps/s")
        results.append((sps, config))
    if not results:
        raise APIUsageError("every candidate configuration failed (see above); check the env on its own")
    best_sps, best = max(results, key=lambda r: r[0])
    say()
    say(f"Fastest: {', '.join(f'{k}={v}' for k, v in best.items())} ({best_sps:,.0f} agent steps/s)")
    return dict(best)


def physical_cores() -> int:
    """Physical cores this process may use: distinct (package, core) pairs of its CPU affinity,
    capped by a cgroup CPU quota (e.g. `docker run --cpus=2`)."""
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(base + "physical_package_id") as f, open(base + "core_id") as g:
                cores.add((f.read().strip(), g.read().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    return min(len(cores) or 1, _quota())


def usable_cpus() -> int:
    """Logical CPUs this process may use: its CPU affinity, capped by a cgroup CPU quota."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cpus, _quota())


def _quota() -> int:
    """CPUs of the cgroup's CPU quota (`docker run --cpus=2`: 2), rounded up; a large number if none."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    return 1 << 30


def candidates(batch_size: int, max_envs: int, cores: int) -> list[dict[str, Any]]:
    """The configurations tried, each valid for pufferlib.vector.make (checked by its own rules)."""
    out: list[dict[str, Any]] = [{"backend": "serial", "num_envs": batch_size, "batch_size": batch_size}]
    for w in divisors(batch_size):
        if w <= cores:
            out.append(
                {
                    "backend": "multiprocessing",
                    "num_envs": batch_size,
                    "num_workers": w,
                    "batch_size": batch_size,
                }
            )
    for batches in (2, 3):
        num_envs = batches * batch_size
        if num_envs > max_envs:
            break
        for w in divisors(num_envs):
            if w > cores or batch_size % (num_envs // w):
                continue
            for zero_copy in (True, False):
                out.append(
                    {
                        "backend": "multiprocessing",
                        "num_envs": num_envs,
                        "num_workers": w,
                        "batch_size": batch_size,
                        "zero_copy": zero_copy,
                    }
                )
    valid = []
    for c in out:
        try:
            check_layout(
                c["num_envs"], c.get("num_workers"), c["batch_size"], c.get("zero_copy", True), False, cores
            )
        except APIUsageError:
            continue
        valid.append(c)
    return valid


def _check(
    creator, batch_size, max_envs, model_forward_s, max_env_ram_gb, max_batch_vram_gb, time_per_test
) -> None:
    if not callable(creator):
        raise APIUsageError(f"env_creator must be a callable that builds one env, got {creator!r}")
    for name, value in (("batch_size", batch_size), ("max_envs", max_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise APIUsageError(f"{name} must be a positive integer (envs), got {value!r}")
    if max_envs < batch_size:
        raise APIUsageError(
            f"max_envs={max_envs} < batch_size={batch_size}: a batch needs at least batch_size envs; "
            f"raise max_envs to {batch_size} or more"
        )
    for name, value, low in (
        ("model_forward_s", model_forward_s, 0.0),
        ("max_env_ram_gb", max_env_ram_gb, None),
        ("max_batch_vram_gb", max_batch_vram_gb, None),
        ("time_per_test", time_per_test, None),
    ):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or (value < 0 if low is not None else value <= 0):
            want = ">= 0" if low is not None else "> 0"
            raise APIUsageError(f"{name} must be a finite number {want} (seconds or GB), got {value!r}")


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return None


def _random_actions(space, rows: int, count: int = 256) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [sample_action(space, rng, rows) for _ in range(count)]


def _profile(creators, seed: int, seconds: float) -> dict[str, Any]:
    """One env stepped (and reset when done) for `seconds`, in this process."""
    before = _rss_mb()
    env: PufferEnv = build_env(creators.creators[0], creators.args[0], creators.kwargs[0], None, seed)
    try:
        env.reset(seed)
        actions = _random_actions(env.single_action_space, env.num_agents)
        steps, resets = [], []
        end = time.perf_counter() + seconds
        k = 0
        while time.perf_counter() < end or not steps:
            start = time.perf_counter()
            if env.done:
                env.reset()
                resets.append(time.perf_counter() - start)
            else:
                env.step(actions[k % len(actions)])
                steps.append(time.perf_counter() - start)
            k += 1
        after = _rss_mb()
        obs = env.single_observation_space
        total = sum(steps) + sum(resets)
        return {
            "agents": int(env.num_agents),
            "sps": len(steps) * env.num_agents / total,
            "std_percent": 100 * float(np.std(steps)) / max(float(np.mean(steps)), 1e-12),
            "reset_percent": 100 * sum(resets) / total,
            "ram_mb": None if before is None or after is None else max(after - before, 1.0),
            "obs_bytes": int(np.prod(obs.shape)) * np.dtype(obs.dtype).itemsize * int(env.num_agents),
        }
    finally:
        env.close()


def _measure(creators, config: dict[str, Any], seed: int, seconds: float, forward_s: float) -> float:
    """Agent steps per second of one configuration: time spent in send and recv only."""
    import pufferlib.vector as pv

    kwargs = {k: v for k, v in config.items() if k != "backend"}
    vecenv = pv.make(
        creators.creators[0],
        creators.args[0],
        creators.kwargs[0],
        backend=config["backend"],
        seed=seed,
        **kwargs,
    )
    try:
        actions = _random_actions(vecenv.single_action_space, vecenv.agents_per_batch)
        vecenv.async_reset(seed)
        waited, calls = 0.0, 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end or calls == 0:
            start = time.perf_counter()
            vecenv.recv()
            waited += time.perf_counter() - start
            if forward_s:
                time.sleep(forward_s)
            start = time.perf_counter()
            vecenv.send(actions[calls % len(actions)])
            waited += time.perf_counter() - start
            calls += 1
        return calls * vecenv.agents_per_batch / max(waited, 1e-12)
    finally:
        vecenv.close()
