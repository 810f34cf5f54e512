"""Crafter bindings: the image, achievements (unlocked or not) in the episode infos, deaths as
terminals and the length limit as a truncation, seeds."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import crafter

BINDINGS = environments.bindings("crafter")
ACHIEVEMENTS = 22


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_registered_and_catalogued():
    assert [b.name for b in BINDINGS] == ["crafter/reward"]
    assert environments.catalog("crafter") == ["crafter/noreward", "crafter/reward"]


def test_spaces_and_episode_infos_with_achievements():
    env = environments.make("crafter/reward", length=40)
    try:
        assert env.single_observation_space.shape == (64, 64, 3) and env.single_action_space.n == 17
        episodes = run_contract(env, steps=90)
        assert episodes, "no 40-step episode ended in 90 steps"
        info = episodes[0]
        unlocked = {k: v for k, v in info.items() if k.startswith("achievements/")}
        assert len(unlocked) == ACHIEVEMENTS and set(unlocked.values()) <= {0.0, 1.0}
        assert info["episode_length"] <= 40
    finally:
        env.close()


def test_length_limit_is_a_truncation():
    env = environments.make("crafter/reward", length=5)
    try:
        env.reset(seed=0)
        for _ in range(5):
            _, _, terminals, truncations, _ = env.step(np.zeros(1, np.int64))  # noop: nobody dies in 5 steps
        assert truncations[0] and not terminals[0] and env.done
    finally:
        env.close()


def test_noreward_plays_the_same_worlds_without_reward():
    with_reward = environments.make("crafter/reward", length=30)
    without = environments.make("crafter/noreward", length=30)
    try:
        a, b = trace(with_reward, 30, seed=4), trace(without, 30, seed=4)
        np.testing.assert_array_equal(a, b)
        without.reset(seed=4)
        rewards = [without.step(np.array([5]))[1][0] for _ in range(20)]  # 5: do (hit a tree, collect wood)
        assert not any(rewards)
    finally:
        with_reward.close()
        without.close()


def test_same_seed_same_world_other_seed_other_world():
    def make():
        return environments.make("crafter/reward")

    first, again, other = trace(make(), 20, seed=1), trace(make(), 20, seed=1), trace(make(), 20, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown Crafter env 'easy'"):
        crafter.make_env("easy")
    with pytest.raises(ValueError, match="size must be >= 9"):
        crafter.make_env("reward", size=4)


def test_one_seed_one_episode_in_any_process():
    """Crafter iterates creatures in memory-address order; the adapter orders them, so processes with
    different memory layouts (here: different allocations first) play the same episode."""
    import subprocess
    import sys

    code = """
import sys, numpy as np
import pufferlib.environments as e
junk = [object() for _ in range(int(sys.argv[1]))]
env = e.make('crafter/reward'); rng = np.random.default_rng(0); env.reset(seed=0); sums = []
for _ in range(300):
    env.reset() if env.done else env.step(rng.integers(0, 17, 1))
    sums.append(int(env.observations.sum()))
print(sums)
"""
    runs = {
        subprocess.run([sys.executable, "-c", code, n], capture_output=True, text=True, check=True).stdout
        for n in ("0", "50000")
    }
    assert len(runs) == 1
