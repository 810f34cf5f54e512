"""Procgen bindings: the gym3 adapter as a native multi-env PufferEnv (spaces, episodes, levels, seeds)."""

import numpy as np
import pytest
from _binding_checks import assert_close_stops_threads, require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import procgen

BINDINGS = environments.bindings("procgen")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_all_sixteen_games_registered():
    assert sorted(b.name for b in BINDINGS) == sorted(f"procgen/{g}" for g in procgen.GAMES)
    assert len(BINDINGS) == 16


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env(num_envs=2)
    try:
        assert env.num_agents == 2 and env.observations.shape == (2, 64, 64, 3)
        run_contract(env, steps=24)
    finally:
        env.close()


def test_episode_infos_match_the_rewards_of_each_game():
    env = environments.make("procgen/coinrun", num_envs=4, seed=1)
    rng = np.random.default_rng(0)
    try:
        env.reset()
        running = np.zeros(4)
        episodes = []
        for _ in range(600):
            _, rewards, terminals, truncations, infos = env.step(rng.integers(0, 15, size=4))
            running += rewards
            assert len(infos) == terminals.sum() and not truncations.any()
            for i, info in zip(np.flatnonzero(terminals), infos, strict=True):
                assert info["episode_return"] == running[i]
                assert info["level_complete"] in (0.0, 1.0)
                running[i] = 0
            episodes += infos
        assert episodes, "no coinrun episode ended in 600 random steps x 4 games"
    finally:
        env.close()


def test_num_levels_one_replays_one_level_whatever_the_seed():
    def first_frame(seed, **kwargs):
        env = environments.make("procgen/maze", seed=seed, **kwargs)
        obs = env.reset()[0].copy()
        env.close()
        return obs

    one_level = {"num_levels": 1, "start_level": 7}
    np.testing.assert_array_equal(first_frame(1, **one_level), first_frame(2, **one_level))
    assert not np.array_equal(first_frame(1), first_frame(2))


def test_same_seed_same_trajectory():
    def make():
        return environments.make("procgen/bigfish", num_envs=2)

    first, again, other = trace(make(), 50, seed=3), trace(make(), 50, seed=3), trace(make(), 50, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_distribution_mode_option_reaches_procgen():
    # Maze's "hard" levels are larger than its "easy" ones, so the first frames differ.
    easy = environments.make("procgen/maze", seed=0, distribution_mode="easy")
    hard = environments.make("procgen/maze", seed=0, distribution_mode="hard")
    try:
        assert not np.array_equal(easy.reset()[0], hard.reset()[0])
    finally:
        easy.close()
        hard.close()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown Procgen game 'coinrunn'"):
        procgen.make_env("coinrunn")
    with pytest.raises(ValueError, match="distribution_mode must be one of"):
        environments.make("procgen/coinrun", distribution_mode="medium")
    with pytest.raises(ValueError, match="invalid options"):
        environments.make("procgen/coinrun", no_such_option=1)
    env = environments.make("procgen/coinrun", num_envs=2)
    with pytest.raises(APIUsageError, match="before reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset()
    with pytest.raises(APIUsageError, match=r"2 integers in \[0, 15\)"):
        env.step(np.array([0, 15]))
    env.close()


def test_close_stops_the_worker_threads():
    assert_close_stops_threads("procgen/coinrun")
