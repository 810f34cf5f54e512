"""Checks shared by the per-family binding tests (tests/unit/envs/test_env_<family>.py); not a test file.

`run_contract` resets an env and takes random valid steps, checking every observation row, reward,
flag and info against what the env declares; `trace` records the observations of a fixed action
sequence, for the seeding tests.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from _strict import skip_or_fail
from _vector_envs import random_actions

import pufferlib.environments as environments
from pufferlib import spaces as pspaces
from pufferlib.environments.registry import Binding


def require(binding: Binding) -> None:
    """Skip with the install hint when the family's packages are missing (a failure in CI, where
    tests/run.sh installs every family)."""
    if not binding.available():
        skip_or_fail(f"{binding.name} needs {', '.join(binding.missing())}: {binding.install_hint}")


def check_observations(env) -> None:
    space = env.single_observation_space
    obs = env.observations
    assert obs.shape == (env.num_agents, *space.shape) and obs.dtype == space.dtype
    for row, live in zip(obs, env.masks, strict=True):
        if not live:
            assert not row.any(), "a masked (absent) agent's observation row must be zeros"
            continue
        assert space.contains(row), f"observation row outside {space}"
        if env.emulated and env.emulated["observation_dtype"] is not None:
            native = env.emulated["emulated_observation_space"]
            struct = np.ascontiguousarray(row).view(env.emulated["observation_dtype"])[0]
            ob = pspaces.read_observation(struct, native)
            assert native.contains(ob), f"unflattened observation outside the env's own space {native}"


def run_contract(env, steps: int, seed: int = 0) -> list[dict]:
    """reset + `steps` random steps (resetting after a done); returns the episode infos seen."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    assert obs is env.observations and infos == []
    check_observations(env)
    episodes: list[dict] = []
    for _ in range(steps):
        if env.done:
            env.reset()
            check_observations(env)
            continue
        obs, rewards, terminals, truncations, infos = env.step(random_actions(env, rng))
        check_observations(env)
        assert rewards.dtype == np.float32 and np.isfinite(rewards).all()
        assert terminals.dtype == bool and truncations.dtype == bool
        assert not rewards[~env.masks].any(), "absent agents must get reward 0"
        assert isinstance(infos, list)
        for info in infos:
            assert {"episode_return", "episode_length"} <= info.keys()
            assert np.isfinite(info["episode_return"]) and info["episode_length"] >= 1
        episodes.extend(infos)
    return episodes


def trace(env, steps: int, seed: int, action_seed: int = 0) -> np.ndarray:
    """Observations after reset(seed) and each of `steps` fixed random actions (env closed after)."""
    rng = np.random.default_rng(action_seed)
    try:
        frames = [env.reset(seed=seed)[0].copy()]
        for _ in range(steps):
            if env.done:
                env.reset()
            else:
                env.step(random_actions(env, rng))
            frames.append(env.observations.copy())
    finally:
        env.close()
    return np.stack(frames)


def assert_close_stops_threads(name: str) -> None:
    """A native multi-env with worker threads (num_threads=2) leaves none running after close()."""
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counts threads through /proc (Linux)")

    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    before = threads()
    env = environments.make(name, num_envs=4, num_threads=2)
    env.reset(seed=0)
    env.step(np.zeros(4, np.int64))
    assert threads() > before
    env.close()
    assert threads() == before
