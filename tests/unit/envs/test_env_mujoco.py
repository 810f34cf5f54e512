"""MuJoCo bindings: every gymnasium v5 id, Box actions, headless rendering, seeding."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import mujoco

BINDINGS = environments.bindings("mujoco")
CATALOG = [environments.get(name) for name in environments.catalog("mujoco")]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_is_every_gymnasium_mujoco_v5_env():
    import gymnasium

    v5 = {
        env_id
        for env_id, spec in gymnasium.registry.items()
        if env_id.endswith("-v5") and str(spec.entry_point).startswith("gymnasium.envs.mujoco")
    }
    assert set(mujoco.ENVS) == v5
    assert {b.name for b in CATALOG} == {f"mujoco/{env_id}" for env_id in v5}
    assert {b.name for b in BINDINGS} < {b.name for b in CATALOG}
    assert environments.get("mujoco/InvertedPendulum-v5").solved == 950  # gymnasium's reward_threshold


@pytest.mark.parametrize("binding", CATALOG, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        obs_size, act_size = mujoco.ENVS[binding.kwargs["name"]]
        assert env.single_observation_space.shape == (obs_size,)
        assert env.single_action_space.shape == (act_size,)
        run_contract(env, steps=24)
    finally:
        env.close()


def test_renders_headless():
    env = mujoco.make_env("HalfCheetah-v5", render_mode="rgb_array", width=64, height=64)
    try:
        env.reset(seed=0)
        env.step(np.zeros((1, 6), np.float32))
        frame = env.render()
        assert frame.shape == (64, 64, 3) and frame.min() != frame.max()
    finally:
        env.close()


def test_options_reach_gymnasium():
    env = environments.make("mujoco/HalfCheetah-v5", exclude_current_positions_from_observation=False)
    try:
        assert env.single_observation_space.shape == (18,)  # x position kept
    finally:
        env.close()


def test_same_seed_same_episode():
    def make():
        return environments.make("mujoco/Hopper-v5")

    first, again, other = trace(make(), 20, seed=7), trace(make(), 20, seed=7), trace(make(), 20, seed=8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
