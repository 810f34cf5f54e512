"""Slime Volleyball bindings: our gym->gymnasium adapter (terminal vs truncation, seeds), the pixel task's
frames, and two-player self-play (zero-sum rewards, each slime's own view)."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import slimevolley

BINDINGS = environments.bindings("slimevolley")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_is_the_three_tasks():
    assert [b.name for b in BINDINGS] == sorted(f"slimevolley/{t}" for t in slimevolley.TASKS)
    assert environments.catalog("slimevolley") == [b.name for b in BINDINGS]


@pytest.mark.parametrize("task", slimevolley.TASKS)
def test_tasks_step_within_their_spaces(task):
    env = environments.make(f"slimevolley/{task}")
    try:
        run_contract(env, steps=64)
    finally:
        env.close()


def test_a_match_lost_is_terminal_and_returns_minus_five():
    env = slimevolley.SlimeVolley()
    env.reset(seed=0)
    total, steps, terminated, truncated = 0.0, 0, False, False
    while not (terminated or truncated):  # standing still: the baseline wins every point
        _, reward, terminated, truncated, info = env.step(np.zeros(3, np.int8))
        total, steps = total + reward, steps + 1
    assert terminated and not truncated and steps < 3000
    assert total == -slimevolley.NUM_LIVES and info["lives"] == 0 and info["opponent_lives"] == 5


def test_the_time_limit_is_a_truncation():
    env = slimevolley.SlimeVolley()
    env.reset(seed=0)
    env._game.t = env._game.t_limit - 1  # one step from upstream's 3,000-step limit
    *_, terminated, truncated, _ = env.step(np.zeros(3, np.int8))
    assert truncated and not terminated


def test_same_seed_same_match():
    def make():
        return environments.make("slimevolley/SlimeVolley-v0")

    first, again, other = trace(make(), 40, seed=1), trace(make(), 40, seed=1), trace(make(), 40, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_pixel_frames_are_drawn_and_move():
    env = environments.make("slimevolley/SlimeVolleyPixel-v0")
    try:
        env.reset(seed=0)
        first = env.observations[0].copy()
        assert first.shape == slimevolley.PIXEL_SHAPE and first.std() > 0
        for _ in range(20):
            env.step(np.array([1]))
        assert not np.array_equal(first, env.observations[0]), "the ball falls: frames must change"
        np.testing.assert_array_equal(env.render(), env.observations[0])
    finally:
        env.close()


def test_selfplay_rewards_are_zero_sum_and_views_mirrored():
    env = environments.make("slimevolley/SlimeVolley-selfplay")
    try:
        env.reset(seed=0)
        assert env.num_agents == 2
        left, right = env.observations
        # At the serve each slime stands at the same distance from the net on its own side.
        np.testing.assert_allclose(left[:4], right[:4])
        scored = 0
        for _ in range(2000):
            _, rewards, terminals, truncations, _ = env.step(np.zeros((2, 3), np.int64))
            assert rewards.sum() == 0
            scored += int(rewards[0] != 0)
            if terminals.any() or truncations.any():
                break
        assert scored > 0, "idle slimes let the ball drop: some point must be scored"
    finally:
        env.close()


def test_unknown_task_is_named():
    with pytest.raises(ValueError, match="Unknown Slime Volleyball task 'SlimeVolley-v9'"):
        slimevolley.make_env("SlimeVolley-v9")
