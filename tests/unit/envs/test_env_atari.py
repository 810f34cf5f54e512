"""Atari bindings: ALE's native preprocessing as a multi-env PufferEnv, episodic life, clipping, seeds."""

import numpy as np
import pytest
from _binding_checks import assert_close_stops_threads, require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import atari

BINDINGS = environments.bindings("atari")
CATALOG = [environments.get(name) for name in environments.catalog("atari")]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_atari57_catalogued_and_every_rom_shipped():
    from ale_py import roms

    names = {b.name for b in BINDINGS}
    assert {"atari/pong", "atari/breakout"} <= names < {b.name for b in CATALOG}
    assert len(CATALOG) == 57  # the registered ten run in the matrix; the rest are made on demand
    assert all(roms.get_rom_path(b.kwargs["name"]) for b in CATALOG)


@pytest.mark.slow
@pytest.mark.parametrize("binding", CATALOG, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        assert env.observations.shape == (1, 4, 84, 84) and env.observations.dtype == np.uint8
        run_contract(env, steps=8)
    finally:
        env.close()


def test_frames_are_stacked_newest_last():
    env = environments.make("atari/breakout", num_envs=2, seed=0)
    rng = np.random.default_rng(0)
    try:
        previous = env.reset()[0].copy()
        for _ in range(50):
            obs, _, terminals, truncations, _ = env.step(rng.integers(0, 4, size=2))
            same_game = ~(terminals | truncations)
            np.testing.assert_array_equal(obs[same_game, :-1], previous[same_game, 1:])
            previous = obs.copy()
    finally:
        env.close()


def test_episodic_life_clipped_rewards_and_whole_game_scores():
    # Two copies of one game, one unclipped, fed the same actions: the clipped one must see
    # sign(raw reward), and its episode_return must be the raw score of the whole game.
    clipped_env = environments.make("atari/breakout", seed=0)
    raw_env = environments.make("atari/breakout", seed=0, clip_rewards=False)
    rng = np.random.default_rng(0)
    try:
        clipped_env.reset()
        raw_env.reset()
        score, life_losses, games = 0.0, 0, []
        for _ in range(800):
            action = rng.integers(0, 4, size=1)
            _, clipped, terminals, _, infos = clipped_env.step(action)
            _, raw, _, _, _ = raw_env.step(action)
            np.testing.assert_array_equal(clipped, np.sign(raw))
            score += float(raw[0])
            life_losses += int(terminals[0])
            for info in infos:
                assert info["episode_return"] == score
                score = 0.0
            games += infos
        assert games, "no breakout game ended in 800 random steps"
        assert life_losses >= 5 * len(games)  # a terminal per lost life, an info per finished game
    finally:
        clipped_env.close()
        raw_env.close()


def test_without_episodic_life_only_game_over_is_terminal():
    env = environments.make("atari/breakout", seed=0, episodic_life=False, clip_rewards=False)
    rng = np.random.default_rng(0)
    try:
        env.reset()
        for _ in range(800):
            _, _, terminals, _, infos = env.step(rng.integers(0, 4, size=1))
            assert terminals.sum() == len(infos)  # no time limit is reached in 800 steps
    finally:
        env.close()


def test_same_seed_same_game_other_seed_other_noops():
    def make():
        return environments.make("atari/breakout")

    first, again, other = trace(make(), 30, seed=3), trace(make(), 30, seed=3), trace(make(), 30, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="snake_case"):
        atari.make_env("SpaceInvaders")
    env = environments.make("atari/pong")
    with pytest.raises(APIUsageError, match="before reset"):
        env.step(np.zeros(1, np.int64))
    env.reset()
    with pytest.raises(APIUsageError, match=r"1 integers in \[0, 6\)"):
        env.step(np.array([6]))
    env.close()


def test_close_stops_the_worker_threads():
    assert_close_stops_threads("atari/pong")
