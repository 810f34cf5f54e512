"""dm_control bindings: every suite task, the state Dict, 84x84 pixels rendered headless, seeding."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace
from _vector_envs import random_actions

import pufferlib.environments as environments
import pufferlib.vector
from pufferlib.environments import dm_control

BINDINGS = environments.bindings("dm_control")
STATE = [environments.get(f"dm_control/{name}") for name in dm_control.NAMES]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_is_the_whole_suite_with_and_without_pixels():
    from dm_control import suite

    assert tuple(suite.ALL_TASKS) == dm_control.TASKS
    assert len(environments.catalog("dm_control")) == 2 * len(suite.ALL_TASKS)
    names = {b.name for b in BINDINGS}
    for task in ("cartpole-swingup", "cheetah-run", "walker-walk", "ball_in_cup-catch", "humanoid-walk"):
        assert f"dm_control/{task}" in names
    assert {b.name for b in BINDINGS if b.pixels} == {"dm_control/cartpole-swingup-pixels"}
    assert environments.get("dm_control/walker-walk-pixels").pixels == (84, 84, 3)  # catalogued


@pytest.mark.parametrize("binding", STATE, ids=lambda b: b.name)
def test_every_task_resets_and_steps_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        run_contract(env, steps=6)
    finally:
        env.close()


def test_state_observation_is_the_suite_dict():
    from pufferlib import spaces as pspaces

    env = environments.make("dm_control/cartpole-swingup")
    try:
        obs, _ = env.reset(seed=0)
        native = env.emulated["emulated_observation_space"]
        assert set(native) == {"position", "velocity"}
        ob = pspaces.read_observation(obs[0].view(env.emulated["observation_dtype"])[0], native)
        suite_obs = env.env.unwrapped._env.task.get_observation(env.env.unwrapped._env.physics)
        np.testing.assert_allclose(ob["position"], suite_obs["position"])
    finally:
        env.close()


@pytest.mark.parametrize("name", ["cartpole-swingup-pixels", "quadruped-run-pixels"])
def test_pixels_are_84x84_frames_rendered_headless(name):
    binding = environments.get(f"dm_control/{name}")
    env = binding.make_env()
    try:
        assert env.single_observation_space.shape == binding.pixels == (84, 84, 3)
        run_contract(env, steps=3)
        assert env.observations.min() != env.observations.max()
        assert "MUJOCO_GL=" in env.render_backend() and "OpenGL" in env.render_backend()
        assert env.env.env.render_kwargs["camera_id"] == (2 if name.startswith("quadruped") else 0)
    finally:
        env.close()


@pytest.mark.timeout(180)
def test_pixel_envs_in_forked_workers_after_the_parent_rendered():
    """llvmpipe's worker threads do not survive fork(); LP_NUM_THREADS=0 keeps the children drawing."""
    parent = environments.make("dm_control/cartpole-swingup-pixels")
    parent.reset(seed=0)  # a GL context and a frame in this process before the workers fork
    vecenv = pufferlib.vector.make(
        environments.get("dm_control/cartpole-swingup-pixels").env_creator(),
        backend=pufferlib.vector.Multiprocessing,
        num_envs=2,
        num_workers=2,
    )
    try:
        obs, _ = vecenv.reset(seed=0)
        obs, *_ = vecenv.step(random_actions(vecenv, np.random.default_rng(0)))
        assert obs.shape == (2, 84, 84, 3) and all(frame.min() != frame.max() for frame in obs)
    finally:
        vecenv.close()
        parent.close()


def test_unknown_task_lists_the_suite():
    with pytest.raises(ValueError, match="names are <domain>-<task>"):
        dm_control.make_env("cartpole-flip")
    with pytest.raises(environments.UnknownEnvironmentError, match="cartpole-swingup"):
        environments.get("dm_control/cartpole-swingupp")


def test_task_kwargs_reach_the_suite():
    env = environments.make("dm_control/cartpole-balance", time_limit=0.05)  # 5 control steps of 10 ms
    try:
        episodes = run_contract(env, steps=12)
        assert episodes and all(info["episode_length"] == 5 for info in episodes)
    finally:
        env.close()


def test_same_seed_same_episode():
    def make():
        return environments.make("dm_control/walker-walk")

    first, again, other = trace(make(), 20, seed=1), trace(make(), 20, seed=1), trace(make(), 20, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
