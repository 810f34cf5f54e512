"""Butterfly bindings: multi-agent emulation, KAZ deaths padded with masks, aliases, downsampling, seeds."""

import itertools
import os

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace
from _vector_envs import random_actions

import pufferlib.environments as environments
from pufferlib.environments import butterfly

BINDINGS = environments.bindings("butterfly")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_current_versions_and_the_old_names_as_aliases():
    names = {b.name for b in BINDINGS}
    assert names == {
        "butterfly/pistonball_v6",
        "butterfly/cooperative_pong_v5",
        "butterfly/cooperative_pong_v6",
        "butterfly/knights_archers_zombies_v10",
        "butterfly/knights_archers_zombies_v11",
    }
    alias = environments.get("butterfly/knights_archers_zombies_v10")
    assert alias.kwargs["name"] == "knights_archers_zombies_v11" and "alias of" in alias.description
    env = alias.make_env()
    assert env.name == "knights_archers_zombies_v11"
    env.close()
    assert all(b.multiagent for b in BINDINGS)


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        assert os.environ["SDL_VIDEODRIVER"]  # pygame needs no screen
        run_contract(env, steps=6 if "pistonball" in binding.name else 24)
    finally:
        env.close()


def test_kaz_dead_agents_are_padded_and_masked():
    env = environments.make("butterfly/knights_archers_zombies_v11")
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        assert env.num_agents == 4 and env.masks.all()
        seen_death = False
        for _ in range(2000):
            if env.done:
                env.reset()
                continue
            obs, rewards, terminals, truncations, _ = env.step(random_actions(env, rng))
            if env.done:
                continue
            # A row is live while its agent plays, including the step it dies on (final observation).
            playing = np.isin(env.possible_agents, env.agents)
            np.testing.assert_array_equal(env.masks, playing | terminals | truncations)
            dead = ~env.masks
            if dead.any():
                seen_death = True
                assert not obs[dead].any() and not rewards[dead].any()
        assert seen_death, "no KAZ agent died in 2000 random steps"
    finally:
        env.close()


def test_downsample_keeps_every_kth_pixel():
    full = butterfly.make_env("cooperative_pong_v6", downsample=1)
    small = environments.make("butterfly/cooperative_pong_v6")  # the binding's downsample=4
    try:
        a, _ = full.reset(seed=3)
        b, _ = small.reset(seed=3)
        assert a.shape == (2, 280, 480, 3) and b.shape == (2, 70, 120, 3)
        np.testing.assert_array_equal(a[:, ::4, ::4], b)
        with pytest.raises(ValueError, match="downsample must be >= 1"):
            butterfly.make_env("pistonball_v6", downsample=0)
    finally:
        full.close()
        small.close()


@pytest.mark.parametrize("name", ["pistonball_v6", "knights_archers_zombies_v11"])
def test_same_seed_same_episode(name):
    def make():
        return environments.make(f"butterfly/{name}")

    steps = 5 if name == "pistonball_v6" else 40
    first, again = trace(make(), steps, seed=1), trace(make(), steps, seed=1)
    other = trace(make(), steps, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_cooperative_pong_observations_show_the_game():
    """Upstream draws pong's screen only in render(): without our draw, every observation was black."""
    env = environments.make("butterfly/cooperative_pong_v6", seed=0)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    frames = [obs.copy()]
    for _ in range(3):
        env.step(random_actions(env, rng))
        frames.append(env.observations.copy())
    env.close()
    for frame in frames:
        assert frame.max() == 255 and (frame > 0).mean() < 0.5, "the paddles and ball are drawn on black"
    assert any((a != b).any() for a, b in itertools.pairwise(frames)), "the frames follow the game"
