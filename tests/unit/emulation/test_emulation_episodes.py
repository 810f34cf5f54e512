"""Termination vs truncation, episode statistics, and reset-on-send after a done."""

import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.ocean import Password, Squared


def test_truncation_is_not_termination():
    env = GymnasiumPufferEnv(env=Squared(distance_to_target=2, num_targets=1, max_ticks=3))
    env.reset(seed=0)
    stay_away = np.array([0])  # with one target, three steps rarely reach it; check both flags
    for _ in range(3):
        _, _, terminals, truncations, infos = env.step(stay_away)
        if env.done:
            break
    assert env.done
    assert terminals[0] != truncations[0]
    if truncations[0]:
        assert infos[0]["episode_length"] == 3


def test_termination_and_episode_stats():
    env = GymnasiumPufferEnv(env=Password(password_length=3))
    solution = env.env.solution.astype(int)
    env.reset()
    infos = []
    for bit in solution:
        _, rewards, terminals, truncations, infos = env.step(np.array([bit]))
    assert terminals[0] and not truncations[0]
    assert rewards[0] == 1.0
    assert infos == [{"score": 1.0, "episode_return": 1.0, "episode_length": 3}]


def test_infos_empty_mid_episode():
    env = GymnasiumPufferEnv(env=Password(password_length=3))
    env.reset()
    assert env.step(np.array([0]))[4] == []


def test_send_after_done_resets_without_consuming_the_action():
    env = GymnasiumPufferEnv(env=Password(password_length=2))
    env.async_reset(seed=1)
    env.send(np.array([1]))
    env.send(np.array([1]))
    obs, rewards, terminals, truncations, infos, ids, masks = env.recv()
    assert terminals[0] and len(infos) == 1
    env.send(np.array([0]))  # consumed by nobody: the env resets instead
    obs, rewards, terminals, truncations, infos, ids, masks = env.recv()
    np.testing.assert_array_equal(obs[0], [-1, -1])
    assert rewards[0] == 0 and not terminals[0] and not truncations[0] and infos == []
    assert masks.tolist() == [True] and ids.tolist() == [0]


def test_box_actions_are_clipped_to_the_space():
    import gymnasium

    env = GymnasiumPufferEnv(env=gymnasium.make("Pendulum-v1"))
    env.reset(seed=0)
    env.step(np.array([[50.0]]))  # Pendulum's torque is in [-2, 2]: out-of-range samples are clipped
    assert env.env.unwrapped.last_u == 2.0
