"""Box2D bindings: the six names, discrete and continuous actions, CarRacing's pixels, seeding."""

import os

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace
from gymnasium import spaces

import pufferlib.environments as environments
from pufferlib.environments import box2d

BINDINGS = environments.bindings("box2d")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_registered_set_and_solved_scores_from_gymnasium():
    assert {b.name for b in BINDINGS} == {f"box2d/{name}" for name in box2d.ENVS}
    assert environments.catalog("box2d") == sorted(b.name for b in BINDINGS)
    solved = {b.name.split("/")[1]: b.solved for b in BINDINGS}
    assert solved["LunarLander-v3"] == solved["LunarLanderContinuous-v3"] == 200
    assert solved["BipedalWalker-v3"] == 300 and solved["CarRacing-v3"] == 900


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        assert os.environ["SDL_VIDEODRIVER"]  # CarRacing draws with pygame, no screen
        run_contract(env, steps=8 if binding.pixels else 48)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("name", "actions"),
    [
        ("LunarLander-v3", spaces.Discrete(4)),
        ("LunarLanderContinuous-v3", spaces.Box(-1, 1, (2,), np.float32)),
        ("BipedalWalkerHardcore-v3", spaces.Box(-1, 1, (4,), np.float32)),
        ("CarRacingDiscrete-v3", spaces.Discrete(5)),
    ],
)
def test_discrete_and_continuous_variants(name, actions):
    env = environments.make(f"box2d/{name}")
    try:
        assert env.single_action_space == actions
    finally:
        env.close()
    assert environments.get("box2d/CarRacing-v3").make_env().single_action_space.shape == (3,)


def test_car_racing_observes_drawn_pixels_and_names_its_renderer():
    binding = environments.get("box2d/CarRacing-v3")
    env = binding.make_env()
    try:
        obs, _ = env.reset(seed=0)
        env.step(np.array([[0.0, 1.0, 0.0]], np.float32))  # gas
        assert env.single_observation_space.shape == binding.pixels == (96, 96, 3)
        assert obs.dtype == np.uint8 and obs.min() != obs.max()
        assert "pygame-ce" in env.render_backend()
    finally:
        env.close()


def test_box_actions_are_clipped_to_the_space_before_the_env_sees_them():
    env = environments.make("box2d/LunarLanderContinuous-v3")
    try:
        env.reset(seed=0)
        env.step(np.array([[50.0, -50.0]], np.float32))  # a Gaussian policy's sample far outside the box
        assert np.isfinite(env.observations).all()
    finally:
        env.close()


@pytest.mark.parametrize("name", ["LunarLander-v3", "BipedalWalkerHardcore-v3"])
def test_same_seed_same_episode(name):
    def make():
        return environments.make(f"box2d/{name}")

    first, again, other = trace(make(), 30, seed=3), trace(make(), 30, seed=3), trace(make(), 30, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
