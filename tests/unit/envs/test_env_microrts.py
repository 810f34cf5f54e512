"""Gym-MicroRTS binding: Java's batched client as one native multi-env, its invalid-action masks end to end
(the policy never samples a masked action), deterministic games against a scripted bot, time-outs as
truncations. Each env runs its games in a child process with a JVM of its own."""

import numpy as np
import pytest
import torch
from _binding_checks import require, run_contract

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import microrts
from pufferlib.frameworks.cleanrl import Policy

BINDINGS = environments.bindings("microrts")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _offsets(env) -> np.ndarray:
    nvec = env.single_action_space.nvec
    return np.concatenate(([0], np.cumsum(nvec)[:-1]))


def test_registered_maps_and_catalog():
    assert [b.name for b in BINDINGS] == ["microrts/10x10", "microrts/4x4", "microrts/8x8"]
    assert environments.catalog("microrts") == sorted(f"microrts/{m}" for m in microrts.MAPS)


def test_games_step_within_their_spaces_even_with_unmasked_actions():
    env = environments.make("microrts/8x8", num_envs=2)
    try:
        episodes = run_contract(env, steps=400)  # random actions: MicroRTS ignores the illegal ones
        assert env.num_agents == 2 and env.single_action_space.nvec.size == 64 * len(microrts.UNIT_ACTION)
        assert episodes, "workerRushAI beats random play within 400 steps"
        assert all(e["win"] in (0.0, 1.0) for e in episodes)
    finally:
        env.close()


def test_observation_planes_are_one_hot_and_masks_mark_our_units():
    env = environments.make("microrts/8x8", num_envs=1)
    try:
        env.reset(seed=0)
        obs = env._struct["obs"][0]
        assert obs.shape == (8, 8, sum(microrts.PLANES))
        start = 0
        for n in microrts.PLANES:  # every cell has exactly one value per feature group
            assert (obs[:, :, start : start + n].sum(-1) == 1).all()
            start += n
        assert env._source[0].sum() >= 2, "the base and a worker can act at the start"
        mask = env._struct["action_mask"][0].reshape(64, -1)
        start = 0
        for n in microrts.UNIT_ACTION:  # each branch of each cell allows something
            assert mask[:, start : start + n].any(-1).all()
            start += n
        idle = ~env._source[0]
        assert (mask[idle].sum(-1) == len(microrts.UNIT_ACTION)).all(), "an idle cell allows only action 0s"
    finally:
        env.close()


def test_the_default_policy_never_samples_a_masked_action():
    env = environments.make("microrts/8x8", num_envs=2)
    try:
        policy = Policy(environments.get("microrts/8x8").policy_class()(env), env)
        env.reset(seed=0)
        offsets = _offsets(env)
        for _ in range(3):
            with torch.no_grad():
                actions, *_ = policy.get_action_and_value(torch.from_numpy(env.observations))
            actions = actions.numpy()
            mask = env._struct["action_mask"]
            for row in range(2):
                assert mask[row][offsets + actions[row]].all(), "a sampled action is masked"
            env.step(actions)
    finally:
        env.close()


def _game(actions: list[np.ndarray]) -> np.ndarray:
    env = environments.make("microrts/8x8", num_envs=1, opponent="workerRushAI")
    try:
        frames = [env.reset(seed=0)[0].copy()]
        for action in actions:
            env.step(action)
            frames.append(env.observations.copy())
        return np.stack(frames)
    finally:
        env.close()


def test_the_same_actions_against_a_scripted_bot_give_the_same_game():
    rng = np.random.default_rng(0)
    nvec = np.tile(microrts.UNIT_ACTION, 64)  # the 8x8 map's action space
    actions = [rng.integers(0, nvec)[None] for _ in range(30)]
    first, again = _game(actions), _game(actions)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[-1]), "the bot's workers move"


def test_max_steps_is_a_truncation():
    env = environments.make("microrts/8x8", num_envs=1, opponent="passiveAI", max_steps=5)
    try:
        env.reset(seed=0)
        noop = np.zeros((1, env.single_action_space.nvec.size), np.int64)
        for _ in range(4):
            _, _, terminals, truncations, _ = env.step(noop)
            assert not terminals.any() and not truncations.any()
        _, _, terminals, truncations, infos = env.step(noop)
        assert truncations.all() and not terminals.any() and infos[0]["episode_length"] == 5
    finally:
        env.close()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="Unknown MicroRTS map '9x9'"):
        microrts.make_env("9x9")
    with pytest.raises(ValueError, match="Unknown MicroRTS bot 'nobody'"):
        microrts.make_env("8x8", opponent="nobody")
    env = environments.make("microrts/8x8")
    try:
        with pytest.raises(APIUsageError, match="before reset"):
            env.step(np.zeros((1, env.single_action_space.nvec.size), np.int64))
        env.reset(seed=0)
        with pytest.raises(APIUsageError, match="actions must be 1 rows of 448 integers"):
            env.step(np.full((1, 448), 99))
    finally:
        env.close()
