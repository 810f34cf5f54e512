"""ocean/pong (pufferlib/ocean/native/pong): the game's own rules through NativeEnv."""

from __future__ import annotations

import numpy as np
import pytest
from _native_ladder import Ladder

from pufferlib.ocean.native import NativeEnv, unavailable

pytestmark = pytest.mark.skipif(bool(unavailable("pong")), reason=str(unavailable("pong")))
ladder = Ladder("pong")

HEIGHT, PADDLE_SPEED, FRAMESKIP = 160.0, 4.0, 4  # speed: pixels per frame
NOOP, UP, DOWN = 0, 1, 2


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
    env = NativeEnv("pong", num_envs=num_envs, seed=5, **kwargs)
    env.reset()
    return env


def track(obs: np.ndarray) -> np.ndarray:
    """A scripted player: keep the paddle's centre at the ball's height."""
    d = obs[:, 3] - obs[:, 0]
    return np.where(d < -0.01, UP, np.where(d > 0.01, DOWN, NOOP)).astype(np.int32)


def test_first_observation_layout() -> None:
    env = make()
    obs = env.observations[0]
    assert obs.shape == (8,)
    assert obs[0] == pytest.approx(0.5) and obs[1] == pytest.approx(0.5)  # paddles centred
    assert obs[2] == pytest.approx(0.5)  # served from the middle
    assert obs[6] == 0 and obs[7] == 0  # no points yet
    env.close()


@pytest.mark.parametrize("frameskip", [1, FRAMESKIP])
def test_paddle_moves_a_frame_per_frameskip(frameskip: int) -> None:
    env = make() if frameskip == FRAMESKIP else make(frameskip=frameskip)  # the default, then 1
    y0 = env.observations[0, 0]
    env.step(np.array([UP]))
    assert env.observations[0, 0] == pytest.approx(y0 - frameskip * PADDLE_SPEED / HEIGHT)
    env.step(np.array([DOWN]))
    env.step(np.array([DOWN]))
    assert env.observations[0, 0] == pytest.approx(y0 + frameskip * PADDLE_SPEED / HEIGHT)
    env.close()


def test_out_of_range_action_is_refused_naming_row_and_range() -> None:
    env = make(num_envs=2)
    with pytest.raises(ValueError, match=r"action 9 of agent row 1 is out of range 0\.\.2"):
        env.step(np.array([0, 9]))
    env.close()


def test_points_pay_plus_and_minus_one_and_end_the_game_at_max_score() -> None:
    env = make(max_score=3)
    rewards_seen, infos = [], []
    for _ in range(20000):
        _, rewards, terminals, truncations, infos = env.step(np.array([NOOP]))
        if rewards[0]:
            rewards_seen.append(float(rewards[0]))
        if terminals[0]:
            break
    assert terminals[0] and not truncations[0]
    assert set(rewards_seen) <= {1.0, -1.0}
    (info,) = infos
    assert info["n"] == 1 and max(info["points_won"], info["points_lost"]) == 3
    assert info["score"] == info["points_won"] - info["points_lost"] == info["episode_return"]
    assert info["wins"] == (info["points_won"] == 3)
    assert env.observations[0, 6] == 0 and env.observations[0, 7] == 0  # the next game's first
    env.close()


def test_max_ticks_truncates_and_autoresets() -> None:
    env = make(max_ticks=40)
    for _ in range(39):
        _, _, terminals, truncations, infos = env.step(track(env.observations))
        assert not truncations[0] and not terminals[0] and infos == []
    _, _, terminals, truncations, infos = env.step(track(env.observations))
    assert truncations[0] and not terminals[0] and infos[0]["episode_length"] == 40
    env.close()


def test_the_tracker_beats_standing_still() -> None:
    """The game is playable: following the ball returns it, standing still concedes."""
    env = make(num_envs=8, max_score=3, max_ticks=4000)
    still, tracked = [], []
    for policy, out in ((lambda o: np.zeros(len(o), np.int32), still), (track, tracked)):
        env.reset(seed=1)
        for _ in range(4000):
            _, _, _, _, infos = env.step(policy(env.observations))
            out += [i["score"] for i in infos]
    assert np.mean(tracked) > np.mean(still) + 1
    env.close()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("max_score", 0, "max_score must be in 1..1000"),
        ("max_ticks", -5, "max_ticks must be in 1.."),
        ("frameskip", 65, "frameskip must be in 1..64"),
    ],
)
def test_bad_kwargs_name_the_key_and_range(key: str, value: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NativeEnv("pong", **{key: value})


def test_render_frame_and_ansi_text() -> None:
    env = make()
    frame = env.render()
    assert frame.shape == (160, 208, 3) and frame.dtype == np.uint8 and frame.std() > 0
    env.render_mode = "ansi"
    assert env.render().startswith("pong  opponent 0 : 0 agent")
    env.close()
