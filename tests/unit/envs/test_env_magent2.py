"""MAgent2 bindings: hundreds of agents through PettingZooPufferEnv, dead agents masked, mixed agent types
made uniform (views padded around the centre, action masks), seeds."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import spaces as pspaces
from pufferlib.environments import magent2

BINDINGS = environments.bindings("magent2")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _native(env, row: int) -> dict:
    struct = env.observations[row].view(env.emulated["observation_dtype"])[0]
    return pspaces.read_observation(struct, env.emulated["emulated_observation_space"])


def test_registered_set_and_catalog():
    assert {b.name for b in BINDINGS} == {"magent2/battle_v4", "magent2/tiger_deer_v4"}
    assert environments.catalog("magent2") == sorted(f"magent2/{name}" for name in magent2.ENVS)
    assert all(b.multiagent and b.extra == "magent2" for b in BINDINGS)


@pytest.mark.parametrize("name", list(magent2.ENVS))
def test_every_env_steps_within_its_spaces(name):
    env = environments.make(f"magent2/{name}")
    try:
        run_contract(env, steps=4)
    finally:
        env.close()


def test_battle_has_162_agents_on_one_shared_space():
    env = environments.make("magent2/battle_v4")
    try:
        env.reset(seed=0)
        assert env.num_agents == 162 and env.emulated["observation_dtype"] is None
        assert env.single_observation_space.shape == (13, 13, 5) and env.single_action_space.n == 21
    finally:
        env.close()


def test_dead_agents_are_padded_and_masked():
    env = environments.make("magent2/combined_arms_v6")  # ranged units hit from afar: deaths come early
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        for _ in range(300):
            _, rewards, terminals, _, _ = env.step(rng.integers(0, 25, size=env.actions.shape))
            playing = np.isin(env.possible_agents, env.agents)
            np.testing.assert_array_equal(env.masks, playing | terminals)  # live on the step it dies
            dead = ~env.masks
            if dead.any():
                assert not env.observations[dead].any() and not rewards[dead].any()
                return
        pytest.fail("no combined_arms agent died in 300 random steps")
    finally:
        env.close()


def test_mixed_types_get_centred_views_and_action_masks():
    from magent2.environments import tiger_deer_v4

    raw = tiger_deer_v4.parallel_env()
    raw_obs, _ = raw.reset(seed=3)
    env = environments.make("magent2/tiger_deer_v4")
    try:
        env.reset(seed=3)
        deer = env.possible_agents.index("deer_0")
        tiger = env.possible_agents.index("tiger_0")
        ob = _native(env, deer)
        assert ob["observation"].shape == (9, 9, 5)
        np.testing.assert_array_equal(ob["observation"][3:6, 3:6], raw_obs["deer_0"])  # 3x3 view, centred
        assert not ob["observation"][:3].any() and not ob["observation"][6:].any()
        assert ob["action_mask"].tolist() == [1, 1, 1, 1, 1, 0, 0, 0, 0]  # deer have 5 actions of 9
        assert _native(env, tiger)["action_mask"].all()
        np.testing.assert_array_equal(_native(env, tiger)["observation"], raw_obs["tiger_0"])
    finally:
        env.close()
        raw.close()


def test_actions_past_an_agents_range_wrap_around():
    env = environments.make("magent2/tiger_deer_v4")
    try:
        env.reset(seed=0)
        seen = {}
        inner = env.env.env
        step = inner.step
        inner.step = lambda actions: (seen.update(actions), step(actions))[1]
        actions = np.full(env.actions.shape, 7)
        env.step(actions)
        assert seen["deer_0"] == 7 % 5 and seen["tiger_0"] == 7
    finally:
        env.close()


def test_same_seed_same_map_other_seed_other_map():
    def make():
        return environments.make("magent2/tiger_deer_v4")

    first, again, other = trace(make(), 3, seed=1), trace(make(), 3, seed=1), trace(make(), 3, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_unknown_env_and_bad_options_are_named():
    with pytest.raises(ValueError, match="Unknown MAgent2 env 'battle_v3'"):
        magent2.make_env("battle_v3")
    with pytest.raises(ValueError, match="invalid options"):
        magent2.make_env("battle_v4", no_such_option=1)
