"""Griddly bindings: GDY games with vector observations, the time limit as a truncation, seeds, and
sprite observations through Vulkan where a driver is installed."""

import glob

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib.environments import griddly

BINDINGS = environments.bindings("griddly")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_registered_and_catalogued():
    assert {b.name for b in BINDINGS} == {"griddly/sokoban", "griddly/zelda", "griddly/clusters"}
    assert len(environments.catalog("griddly")) == len(griddly.GAMES) == 24


@pytest.mark.parametrize("game", list(griddly.GAMES))
def test_every_game_steps_with_vector_observations(game):
    env = environments.make(f"griddly/{game}")
    try:
        space = env.single_observation_space
        assert space.dtype == np.uint8 and len(space.shape) == 3  # (objects, width, height)
        run_contract(env, steps=12)
    finally:
        env.close()


def test_time_limit_is_a_truncation():
    env = environments.make("griddly/sokoban", max_steps=7)
    try:
        env.reset(seed=0)
        for _ in range(7):
            _, _, terminals, truncations, infos = env.step(np.zeros(env.actions.shape, np.int64))  # no-op
        assert truncations[0] and not terminals[0] and infos[0]["episode_length"] == 7
    finally:
        env.close()


def test_same_seed_same_monsters():
    def make():
        return environments.make("griddly/zelda")

    first, again, other = trace(make(), 60, seed=1), trace(make(), 60, seed=1), trace(make(), 60, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_sprite_observations_render_through_vulkan():
    if not glob.glob("/usr/share/vulkan/icd.d/*.json"):
        skip_or_fail("no Vulkan driver (apt mesa-vulkan-drivers gives lavapipe on CPU)")
    env = environments.make("griddly/sokoban", observer="sprite")
    try:
        obs, _ = env.reset(seed=0)
        assert obs.shape[1] == 3 and obs.std() > 0  # (1, 3, H, W) images
    finally:
        env.close()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown Griddly game 'soko'"):
        griddly.make_env("soko")
    with pytest.raises(ValueError, match="observer must be one of"):
        griddly.make_env("sokoban", observer="isometric3d")
