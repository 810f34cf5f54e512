"""ocean/breakout (pufferlib/ocean/native/breakout): the game's own rules through NativeEnv."""

from __future__ import annotations

import numpy as np
import pytest
from _native_ladder import Ladder

from pufferlib.ocean.native import NativeEnv, unavailable

pytestmark = pytest.mark.skipif(bool(unavailable("breakout")), reason=str(unavailable("breakout")))
ladder = Ladder("breakout")

BRICKS, PADDLE_SPEED, WIDTH, FRAMESKIP = 108, 6.0, 288.0, 4  # speed: pixels per frame
NOOP, LEFT, RIGHT = 0, 1, 2


@pytest.mark.parametrize(
    "rung",
    [
        "same_seed_identical",
        "threads_identical",
        "seeds_differ",
        "reset_reseeds",
        "actions_refused",
        "every_element_written",
        "renders",
        "episodes_logged",
        "close_frees",
    ],
)
def test_ladder(rung: str) -> None:
    getattr(ladder, rung)()


def test_fuzz_under_asan_and_ubsan(tmp_path) -> None:
    ladder.fuzz_clean(tmp_path)


def make(num_envs: int = 1, **kwargs) -> NativeEnv:
    env = NativeEnv("breakout", num_envs=num_envs, seed=3, **kwargs)
    env.reset()
    return env


def track(obs: np.ndarray) -> np.ndarray:
    """A scripted player: move the paddle under the ball."""
    d = obs[:, 1] - obs[:, 0]
    return np.where(d < -0.01, LEFT, np.where(d > 0.01, RIGHT, NOOP)).astype(np.int32)


def test_first_observation_layout() -> None:
    env = make()
    obs = env.observations[0]
    assert obs.shape == (6 + BRICKS,)
    assert obs[0] == pytest.approx(0.5)  # paddle centred
    assert obs[4] > 0  # the serve goes down
    assert obs[5] == 1.0  # every life left
    assert (obs[6:] == 1.0).all()  # every brick standing
    env.close()


@pytest.mark.parametrize("frameskip", [1, FRAMESKIP])
def test_paddle_moves_a_frame_per_frameskip_and_stops_at_the_wall(frameskip: int) -> None:
    env = make() if frameskip == FRAMESKIP else make(frameskip=frameskip)  # the default, then 1
    x0 = env.observations[0, 0]
    env.step(np.array([RIGHT]))
    assert env.observations[0, 0] == pytest.approx(x0 + frameskip * PADDLE_SPEED / WIDTH)
    env.step(np.array([LEFT]))
    assert env.observations[0, 0] == pytest.approx(x0)
    for _ in range(100):
        env.step(np.array([LEFT]))
    assert env.observations[0, 0] == pytest.approx(16 / WIDTH)  # half a paddle from the left wall
    env.close()


def test_out_of_range_action_is_refused_naming_row_and_range() -> None:
    env = make(num_envs=4)
    with pytest.raises(ValueError, match=r"action 3 of agent row 2 is out of range 0\.\.2"):
        env.step(np.array([0, 0, 3, 0]))
    with pytest.raises(ValueError, match=r"action -1 of agent row 0"):
        env.step(np.array([-1, 0, 0, 0]))
    env.close()


@pytest.mark.parametrize(
    ("actions", "error"),
    [
        ([2**32 + 2, 2**33], r"action 4294967298 of agent row 0 is out of range 0\.\.2"),  # wrapped to [2, 0]
        ([2**31, 0], r"action 2147483648 of agent row 0 is out of range"),  # reported as -2147483648
        ([2.9, -0.5], r"action 2\.9 of agent row 0 is not an integer"),  # truncated to [2, 0]
        ([1.0, float("nan")], r"action nan of agent row 1 is not an integer"),
        ([1 + 1j, 0], r"actions must be real integers, got dtype complex128"),  # imaginary part dropped
        (np.array([2**63, 0], np.uint64), r"action 9223372036854775808 of agent row 0 is out of range"),
    ],
)
def test_actions_are_checked_as_given_before_the_int32_cast(actions, error: str) -> None:
    env = make(num_envs=2)
    before = env.observations.copy()
    with pytest.raises(ValueError, match=error):
        env.step(np.array(actions))
    np.testing.assert_array_equal(env.observations, before)  # nothing stepped
    env.step(np.array([2.0, 1.0]))  # integral floats and other int widths in range still pass
    env.step(np.array([2, 0], np.int64))
    env.close()


def test_reward_is_one_per_brick_broken() -> None:
    env = make(num_envs=8)
    broken = 0.0
    for _ in range(400):
        before = env.observations[:, 6:].sum(axis=1)
        _, rewards, terminals, truncations, _ = env.step(track(env.observations))
        after = env.observations[:, 6:].sum(axis=1)
        live = ~(terminals | truncations)
        np.testing.assert_array_equal(rewards[live], (before - after)[live])
        broken += rewards.sum()
    assert broken > 8  # the tracker breaks bricks
    env.close()


def test_the_ball_never_ends_a_step_inside_a_standing_brick() -> None:
    """Bricks are 16 x 6 pixels from y = 32, the ball 4 x 4: its centre is in the observation."""
    env = make(num_envs=32)
    rng = np.random.default_rng(0)
    for _ in range(300):
        actions = np.where(rng.random(32) < 0.8, track(env.observations), rng.integers(0, 3, 32))
        obs = env.step(actions.astype(np.int32))[0]
        x, y = obs[:, 1] * WIDTH - 2, obs[:, 2] * 208 - 2 - 32  # the ball's corner, from the bricks' top
        for i in np.flatnonzero((y + 4 > 0) & (y < 36)):
            rows = range(max(int(y[i] // 6), 0), min(int((y[i] + 4 - 1e-3) // 6), 5) + 1)
            cols = range(int(x[i] // 16), min(int((x[i] + 4 - 1e-3) // 16), 17) + 1)
            standing = obs[i, 6:].reshape(6, 18)
            assert not any(standing[r, c] for r in rows for c in cols), (i, x[i], y[i])
    env.close()


def test_losing_every_life_ends_the_episode_as_terminal() -> None:
    env = make(lives=2)
    infos: list[dict] = []
    steps = 0
    while steps < 5000:
        _, _, terminals, truncations, infos = env.step(np.array([NOOP]))
        steps += 1
        if terminals[0]:
            break
    assert terminals[0] and not truncations[0]
    (info,) = infos
    assert info["n"] == 1 and info["lives_lost"] == 2 and info["episode_length"] == steps
    assert info["bricks_broken"] == info["episode_return"]
    assert env.observations[0, 5] == 1.0 and (env.observations[0, 6:] == 1).all()  # the next episode's first
    env.close()


def test_max_ticks_truncates_and_autoresets() -> None:
    env = make(max_ticks=30)
    for _ in range(29):
        _, _, terminals, truncations, infos = env.step(track(env.observations))
        assert not truncations[0] and not terminals[0] and infos == []
    _, _, terminals, truncations, infos = env.step(track(env.observations))
    assert truncations[0] and not terminals[0]
    assert infos[0]["episode_length"] == 30 and infos[0]["cleared"] == 0
    assert env.observations[0, 0] == pytest.approx(0.5)  # the paddle is back in the middle
    env.close()


def test_the_tracker_scores_far_above_random() -> None:
    """The game is playable: following the ball keeps it in play and breaks most bricks."""
    env = make(num_envs=4, max_ticks=3000)
    scores = []
    for _ in range(3000):
        _, _, _, _, infos = env.step(track(env.observations))
        scores += [i["bricks_broken"] for i in infos]
    assert scores and min(scores) > 30
    env.close()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("lives", 0, "lives must be in 1..99"),
        ("max_ticks", 0, "max_ticks must be in 1.."),
        ("frameskip", 0, "frameskip must be in 1..64"),
    ],
)
def test_bad_kwargs_name_the_key_and_range(key: str, value: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NativeEnv("breakout", **{key: value})


def test_render_frame_and_ansi_text() -> None:
    env = make()
    frame = env.render()
    assert frame.shape == (208, 288, 3) and frame.dtype == np.uint8 and frame.std() > 0
    env.render_mode = "ansi"
    text = env.render()
    assert text.startswith("breakout  score 0") and text.count("#") == BRICKS * 2
    env.close()
