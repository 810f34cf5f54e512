"""Meta-World bindings: MT1 tasks with the goal observable, success in infos, seeding."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import metaworld

BINDINGS = environments.bindings("metaworld")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_is_every_v3_task():
    import metaworld as mw

    assert set(metaworld.TASKS) == set(mw.ALL_V3_ENVIRONMENTS)
    assert environments.catalog("metaworld") == sorted(f"metaworld/{task}" for task in metaworld.TASKS)
    assert {b.name for b in BINDINGS} == {f"metaworld/{task}" for task in metaworld.REGISTERED}


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        assert env.single_observation_space.shape == (39,) and env.single_action_space.shape == (4,)
        run_contract(env, steps=16)
    finally:
        env.close()


def test_goal_is_observable_and_one_of_the_mt1_variations():
    env = environments.make("metaworld/push-v3")
    try:
        goals = set()
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            goal = obs[0, -3:]
            np.testing.assert_allclose(goal, env.env.unwrapped._target_pos)
            assert np.abs(goal).sum() > 0
            goals.add(tuple(goal))
        assert len(goals) > 1  # seeds pick different variations of the 50
        assert len(env.env.tasks) == 50
    finally:
        env.close()


def test_success_reaches_the_episode_infos():
    """Meta-World's scripted reach policy solves the task: episode_success is 1 at the episode's end."""
    from metaworld.policies import SawyerReachV3Policy

    env = environments.make("metaworld/reach-v3")
    policy = SawyerReachV3Policy()
    try:
        obs, _ = env.reset(seed=0)
        infos = []
        while not infos:
            _, _, terminals, truncations, infos = env.step(policy.get_action(obs[0].copy())[None])
        assert truncations[0] and not terminals[0]  # success does not end the episode; 500 steps do
        assert infos[0]["episode_success"] == 1.0 and infos[0]["episode_length"] == 500
        assert "success" in infos[0]
    finally:
        env.close()


def test_same_seed_same_episode_and_task_seed_changes_the_goals():
    def make(**kwargs):
        return environments.make("metaworld/pick-place-v3", **kwargs)

    first, again, other = trace(make(), 15, seed=2), trace(make(), 15, seed=2), trace(make(), 15, seed=3)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert not np.array_equal(first[0], trace(make(task_seed=1), 0, seed=2)[0])


def test_unknown_task_is_named():
    with pytest.raises(ValueError, match="Unknown Meta-World task 'reach-v2'"):
        metaworld.make_env("reach-v2")
