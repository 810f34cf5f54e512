"""MiniGrid bindings: spaces of every registered id, the mission as fixed-length bytes, seeding."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import minigrid

BINDINGS = environments.bindings("minigrid")
CATALOG = [environments.get(name) for name in environments.catalog("minigrid")]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _native(env) -> dict:
    from pufferlib import spaces as pspaces

    struct = env.observations[0].view(env.emulated["observation_dtype"])[0]
    return pspaces.read_observation(struct, env.emulated["emulated_observation_space"])


def test_registered_set():
    names = {b.name for b in BINDINGS}
    assert {"minigrid/MiniGrid-Empty-8x8-v0", "minigrid/MiniGrid-DoorKey-5x5-v0"} <= names
    assert names < {b.name for b in CATALOG}
    assert len(CATALOG) == len(minigrid.ENVS)  # every other id is made on demand


@pytest.mark.parametrize("binding", CATALOG, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        run_contract(env, steps=24)
    finally:
        env.close()


def test_mission_bytes_decode_to_the_env_mission():
    env = environments.make("minigrid/MiniGrid-LockedRoom-v0")
    try:
        env.reset(seed=3)
        ob = _native(env)
        assert ob["mission"].shape == (minigrid.MISSION_LENGTH,) and ob["mission"].dtype == np.uint8
        assert minigrid.decode_mission(ob["mission"]) == env.env.unwrapped.mission
        assert set(ob) == {"image", "direction", "mission"}
    finally:
        env.close()


def test_mission_that_does_not_fit_names_the_length_to_pass():
    env = environments.make("minigrid/MiniGrid-DoorKey-5x5-v0", mission_length=8)
    with pytest.raises(APIUsageError, match=r"pass mission_length=\d+ or more"):
        env.reset(seed=0)
    env.close()


def test_mission_length_zero_drops_the_mission_and_the_policy_still_builds():
    import torch

    binding = environments.get("minigrid/MiniGrid-Empty-8x8-v0")
    env = binding.make_env(mission_length=0)
    try:
        obs, _ = env.reset(seed=0)
        assert set(_native(env)) == {"image", "direction"}
        logits, value = binding.policy_class()(env)(torch.from_numpy(obs))
        assert value.shape == (1, 1) and logits.shape == (1, 7)  # Discrete(7) stays Discrete
    finally:
        env.close()


def test_same_seed_same_episode_other_seed_other_layout():
    def make():
        return environments.make("minigrid/MiniGrid-DoorKey-8x8-v0")

    first, again, other = trace(make(), 40, seed=5), trace(make(), 40, seed=5), trace(make(), 40, seed=6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
