"""MiniHack bindings: minihack 1.0.2 on nle 1.3 (pkg_resources from setuptools<81), spaces, seeding."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import minihack, nethack

BINDINGS = environments.bindings("minihack")
CATALOG = [environments.get(name) for name in environments.catalog("minihack")]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_registered_set():
    names = {b.name for b in BINDINGS}
    assert "minihack/MiniHack-Room-5x5-v0" in names and names < {b.name for b in CATALOG}
    assert len(CATALOG) == len(minihack.ENVS)  # every other level is made on demand
    assert all(b.policy == nethack.Policy for b in CATALOG)


@pytest.mark.parametrize("binding", CATALOG, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        assert set(env.emulated["emulated_observation_space"].spaces) == set(nethack.OBSERVATION_KEYS)
        run_contract(env, steps=24)
    finally:
        env.close()


def test_room_episodes_end_with_stats():
    env = environments.make("minihack/MiniHack-Room-5x5-v0")
    try:
        episodes = run_contract(env, steps=300, seed=4)
        assert episodes, "no MiniHack-Room-5x5 episode ended in 300 random steps"
        assert all(e["episode_length"] <= 100 for e in episodes)  # the level's own step limit
    finally:
        env.close()


@pytest.mark.parametrize("name", ["MiniHack-Room-Random-5x5-v0", "MiniHack-MultiRoom-N2-v0"])
def test_same_seed_same_level_other_seed_other_level(name):
    # MultiRoom draws its layout from a MiniGrid env, seeded apart from NetHack's RNGs.
    def make():
        return environments.make(f"minihack/{name}")

    first, again, other = trace(make(), 40, seed=7), trace(make(), 40, seed=7), trace(make(), 40, seed=8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
