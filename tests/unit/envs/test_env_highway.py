"""highway-env bindings: kinematics observations, parking's goal-conditioned Dict with continuous
actions, configs passed through, seeds. highway-env steps slowly (tens of steps/s), so runs are short."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import spaces as pspaces
from pufferlib.environments import highway

BINDINGS = environments.bindings("highway")
ISSUE_TASKS = ("highway-v0", "merge-v0", "roundabout-v0", "intersection-v0", "parking-v0")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_has_the_tasks():
    assert set(ISSUE_TASKS) <= set(highway.ENVS)
    assert environments.catalog("highway") == sorted(f"highway/{name}" for name in highway.ENVS)


@pytest.mark.parametrize("name", ["highway-fast-v0", *ISSUE_TASKS[1:]])  # highway-v0's twin at 5 Hz physics
def test_kinematics_tasks_step_within_their_spaces(name):
    env = environments.make(f"highway/{name}")
    try:
        run_contract(env, steps=6)
    finally:
        env.close()


def test_parking_is_goal_conditioned_with_continuous_actions():
    env = environments.make("highway/parking-v0")
    try:
        env.reset(seed=0)
        native = env.emulated["emulated_observation_space"]
        assert set(native.spaces) == {"observation", "achieved_goal", "desired_goal"}
        struct = env.observations[0].view(env.emulated["observation_dtype"])[0]
        ob = pspaces.read_observation(struct, native)
        assert ob["desired_goal"].shape == (6,) and not np.array_equal(
            ob["desired_goal"], ob["achieved_goal"]
        )
        assert env.single_action_space.shape == (2,)
        env.step(np.array([[5.0, -5.0]], np.float32))  # outside [-1, 1]: the emulation clips it
    finally:
        env.close()


def test_config_reaches_highway_env():
    env = environments.make(
        "highway/highway-fast-v0", config={"observation": {"type": "Kinematics", "vehicles_count": 8}}
    )
    try:
        assert env.single_observation_space.shape == (8, 5)
    finally:
        env.close()


def test_same_seed_same_traffic():
    def make():
        return environments.make("highway/highway-fast-v0")

    first, again, other = trace(make(), 5, seed=1), trace(make(), 5, seed=1), trace(make(), 5, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_unknown_id_is_named():
    with pytest.raises(ValueError, match="Unknown highway-env id 'highway-v9'"):
        highway.make_env("highway-v9")
