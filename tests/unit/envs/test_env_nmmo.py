"""Neural MMO bindings: nmmo 2.1.1 (installed --no-deps) on our numpy 1.26 / gymnasium 1.2 / pettingzoo
1.27, dozens of agents through PettingZooPufferEnv, deaths masked, the maps in a folder of the env's own,
seeds, config options, and the NMMO policy's action-target masks."""

import os

import numpy as np
import pytest
import torch
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib import spaces as pspaces
from pufferlib.environments import nmmo

BINDINGS = environments.bindings("nmmo")
NVEC = [3, 101, 385, 127, 13, 13, 101, 99, 101, 5, 13, 99, 13]


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _native(env, row: int) -> dict:
    struct = env.observations[row].view(env.emulated["observation_dtype"])[0]
    return pspaces.read_observation(struct, env.emulated["emulated_observation_space"])


def test_registered_set_and_catalog():
    assert [b.name for b in BINDINGS] == ["nmmo/Small"]
    assert environments.catalog("nmmo") == ["nmmo/Medium", "nmmo/Small"]
    assert all(b.multiagent and b.extra == "nmmo" and "--no-deps nmmo" in b.install_hint for b in BINDINGS)


def test_small_has_64_agents_on_one_flat_space():
    env = environments.make("nmmo/Small")
    try:
        env.reset(seed=0)
        assert env.num_agents == 64 and env.masks.all()
        assert env.single_observation_space.shape == (29768,)
        assert env.single_action_space.nvec.tolist() == NVEC
        ob = _native(env, 0)
        assert ob["Tile"].shape == (225, 3) and ob["Entity"].shape == (100, 31)
        assert ob["ActionTargets"]["Move"]["Direction"].shape == (5,)
    finally:
        env.close()


def test_medium_is_nmmos_default():
    env = environments.make("nmmo/Medium")
    try:
        env.reset(seed=0)
        assert env.num_agents == 128 and env.env.config.MAP_SIZE == 160
    finally:
        env.close()


def test_a_long_random_rollout_keeps_the_contract_through_deaths_and_resets():
    """Random actions: agents die (masked, zeroed, reward 0), every agent is gone, the env resets."""
    env = environments.make("nmmo/Small", num_agents=16)
    try:
        episodes = run_contract(env, steps=400)
    finally:
        env.close()
    assert len(episodes) >= 2  # one info per game (every agent gone, or the horizon): several games ended


def test_dead_agents_are_zeroed_and_masked():
    env = environments.make("nmmo/Small", num_agents=16)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        for _ in range(200):
            _, rewards, terminals, _, _ = env.step(rng.integers(0, NVEC, size=env.actions.shape))
            playing = np.isin(env.possible_agents, env.agents)
            np.testing.assert_array_equal(env.masks, playing | terminals)  # live on the step it dies
            dead = ~env.masks
            if dead.any():
                assert not env.observations[dead].any() and not rewards[dead].any()
                return
        pytest.fail("no Neural MMO agent died in 200 random steps")
    finally:
        env.close()


def test_same_seed_same_game_other_seed_other_game():
    def make():
        return environments.make("nmmo/Small", num_agents=8)

    first, again, other = trace(make(), 5, seed=1), trace(make(), 5, seed=1), trace(make(), 5, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_maps_go_to_a_folder_of_the_envs_own_and_are_removed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nmmo's default would be ./maps/small
    env = environments.make("nmmo/Small", num_agents=4)
    maps = env.maps_dir
    env.reset(seed=0)
    assert os.listdir(maps) and not (tmp_path / "maps").exists()
    env.close()
    del env
    import gc

    gc.collect()
    assert not os.path.exists(maps)


def test_config_options_pass_through_and_bad_ones_are_named():
    env = environments.make("nmmo/Small", num_agents=4, HORIZON=16)
    try:
        env.reset(seed=0)
        assert env.num_agents == 4 and env.env.config.HORIZON == 16
    finally:
        env.close()
    with pytest.raises(ValueError, match="Unknown Neural MMO config 'Huge'"):
        nmmo.make_env("Huge")
    with pytest.raises(ValueError, match="unknown option 'horizon'"):
        nmmo.make_env("Small", horizon=16)
    with pytest.raises(APIUsageError, match="num_agents must be >= 1"):
        nmmo.make_env("Small", num_agents=0)


def test_the_policy_masks_illegal_action_arguments():
    binding = environments.get("nmmo/Small")
    env = binding.make_env(num_agents=8)
    try:
        env.reset(seed=0)
        policy = binding.policy_class()(env)
        obs = torch.from_numpy(env.observations)
        logits, value = policy(obs)
        assert [lg.shape for lg in logits] == [(8, n) for n in NVEC] and value.shape == (8, 1)
        targets = _native(env, 0)["ActionTargets"]
        legal = targets["Move"]["Direction"].astype(bool)
        move = logits[9][0]
        assert (move[~legal] == torch.finfo(move.dtype).min).all() and (move[legal] > -1e30).all()
        legal_attack = targets["Attack"]["Target"].astype(bool)
        assert (logits[1][0][~legal_attack] == torch.finfo(move.dtype).min).all()
        sampled = torch.stack([torch.distributions.Categorical(logits=lg).sample() for lg in logits], 1)
        env.step(sampled.numpy())
    finally:
        env.close()
