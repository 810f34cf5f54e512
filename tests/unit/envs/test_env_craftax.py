"""Craftax bindings: one jitted step for all games, restarts inside it, achievements in the infos, seeds,
pixels as uint8, and a JAX-safe path for processes forked from one that ran JAX.

Compiling the batched step takes tens of seconds on CPU, so the tests share a few programs (the
persistent compilation cache keeps them for later runs)."""

import subprocess
import sys

import numpy as np
import pytest
from _binding_checks import require, run_contract

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import craftax

BINDINGS = environments.bindings("craftax")
CLASSIC = "craftax/Craftax-Classic-Symbolic-v1"


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_registered_and_catalogued():
    assert [b.name for b in BINDINGS] == [CLASSIC]
    assert environments.catalog("craftax") == sorted(f"craftax/{name}" for name in craftax.ENVS)


def test_batched_games_restart_and_report_achievements():
    env = environments.make(CLASSIC, num_envs=4)
    try:
        assert env.single_observation_space.shape == (1345,) and env.single_action_space.n == 17
        episodes = run_contract(env, steps=400)  # random Classic agents die within a few hundred steps
        assert episodes, "no Craftax-Classic episode ended in 400 steps x 4 games"
        unlocked = {k: v for k, v in episodes[0].items() if k.startswith("achievements/")}
        assert len(unlocked) == 22 and set(unlocked.values()) <= {0.0, 1.0}
        assert not env.done  # native: games restart themselves, the env never waits for reset()
    finally:
        env.close()


def test_same_seed_same_games_other_seed_other_games():
    def run(seed):
        env = environments.make(CLASSIC, num_envs=4)
        rng = np.random.default_rng(0)
        frames = [env.reset(seed=seed)[0].copy()]
        for _ in range(30):
            frames.append(env.step(rng.integers(0, 17, 4))[0].copy())
        return np.stack(frames)

    first, again, other = run(1), run(1), run(2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_pixels_arrive_as_uint8_images():
    env = environments.make("craftax/Craftax-Classic-Pixels-v1", num_envs=2)
    try:
        obs, _ = env.reset(seed=0)
        assert obs.shape == (2, 63, 63, 3) and obs.dtype == np.uint8 and obs.std() > 0
    finally:
        env.close()


def test_a_fork_of_a_jax_process_runs_its_games_in_a_child():
    """JAX aborts in a forked child; the env notices and steps its games in a process of its own."""
    code = f"""
import os, sys, numpy as np
import pufferlib.environments as e
parent = e.make({CLASSIC!r}, num_envs=4)
parent.reset(seed=0)
pid = os.fork()
if pid == 0:
    env = e.make({CLASSIC!r}, num_envs=4)
    obs, _ = env.reset(seed=0)
    print(type(env._engine).__name__, bool((obs == parent.observations).all()), flush=True)
    env.close()
    os._exit(0)
os.waitpid(pid, 0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.stdout.split() == ["Remote", "True"], out.stderr[-2000:]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown Craftax id 'Craftax-v1'"):
        craftax.make_env("Craftax-v1")
    with pytest.raises(ValueError, match="resets must be between 1 and num_envs=2"):
        craftax.make_env("Craftax-Classic-Symbolic-v1", num_envs=2, resets=3)
    with pytest.raises(ValueError, match="process must be"):
        craftax.make_env("Craftax-Classic-Symbolic-v1", process="thread")
    env = environments.make(CLASSIC, num_envs=4)
    with pytest.raises(APIUsageError, match="before reset"):
        env.step(np.zeros(4, np.int64))
    env.reset()
    with pytest.raises(APIUsageError, match=r"4 integers in \[0, 17\)"):
        env.step(np.array([0, 1, 2, 17]))
