"""NetHack bindings: every NLE task, the trimmed Dict observation, seeding, the structured policy."""

import os
import tempfile

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import nethack

BINDINGS = environments.bindings("nethack")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_every_nle_task_registered():
    assert sorted(b.name for b in BINDINGS) == sorted(f"nethack/{t}" for t in nethack.TASKS)
    assert "nethack/NetHackScore-v0" in {b.name for b in BINDINGS}


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_reset_and_step_within_declared_spaces(binding):
    env = binding.make_env()
    try:
        space = env.emulated["emulated_observation_space"]
        assert set(space.spaces) == set(nethack.OBSERVATION_KEYS)
        run_contract(env, steps=32)
    finally:
        env.close()


def test_time_limit_ends_the_episode_as_a_truncation_with_stats():
    env = environments.make("nethack/NetHackScore-v0", max_episode_steps=20)
    try:
        env.reset(seed=0)
        action = np.zeros((1, 1), np.int64)
        for _ in range(19):
            env.step(action)
            assert not env.done
        _, _, terminals, truncations, infos = env.step(action)
        assert env.done and truncations[0] and not terminals[0]
        assert infos[0]["episode_length"] == 20 and "end_status" in infos[0]
    finally:
        env.close()


def test_same_seed_same_game_other_seed_other_game():
    def make():
        return environments.make("nethack/NetHackScore-v0")

    first, again, other = trace(make(), 60, seed=11), trace(make(), 60, seed=11), trace(make(), 60, seed=12)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_challenge_task_documents_that_it_refuses_seeds():
    binding = environments.get("nethack/NetHackChallenge-v0")
    assert binding.seeding.startswith("none")
    env = binding.make_env()
    try:
        run_contract(env, steps=8, seed=1)  # still runs, unseeded
    finally:
        env.close()


def test_policy_reads_the_hero_centred_crop():
    import torch

    from pufferlib.pytorch import nativize_tensor

    binding = environments.get("nethack/NetHackScore-v0")
    env = binding.make_env()
    try:
        obs, _ = env.reset(seed=2)
        policy = binding.policy_class()(env)
        x = nativize_tensor(torch.from_numpy(obs), policy.native)
        glyphs, blstats = x["glyphs"].long(), x["blstats"].long()
        crop = policy._crop(glyphs, blstats)
        hx, hy = int(blstats[0, 0]), int(blstats[0, 1])
        assert crop.shape == (1, policy.crop, policy.crop)
        assert crop[0, policy.crop // 2, policy.crop // 2] == glyphs[0, hy, hx]  # the hero itself
        logits, value = policy(torch.from_numpy(obs))
        assert logits.shape == (1, 23) and value.shape == (1, 1)  # Discrete(23) stays Discrete
    finally:
        env.close()


def test_other_observation_keys_and_a_clear_policy_error_without_glyphs():
    binding = environments.get("nethack/NetHackScore-v0")
    env = binding.make_env(observation_keys=("chars", "blstats"))
    try:
        run_contract(env, steps=4)
        with pytest.raises(ValueError, match=r"needs the observation keys \['glyphs', 'blstats'\]"):
            binding.policy_class()(env)
    finally:
        env.close()


def test_close_removes_nle_temporary_files():
    def nle_dirs():
        return {d for d in os.listdir(tempfile.gettempdir()) if d.startswith("nle")}

    before = nle_dirs()
    env = environments.make("nethack/NetHackScore-v0")
    env.reset(seed=0)
    env.close()
    assert nle_dirs() <= before


def test_render_draws_the_map_as_text_without_changing_the_observations():
    """render() is NLE's text map (its `chars`), kept out of the agent's observations unless asked for."""
    env = environments.make("nethack/NetHackScore-v0")
    plain = environments.make("nethack/NetHackScore-v0", render_mode=None)
    try:
        env.reset(seed=3)
        screen = env.render()
        assert isinstance(screen, str) and len(screen.splitlines()) == 21, screen
        assert "@" in screen, screen  # the hero
        assert env.single_observation_space == plain.single_observation_space
        env.step(np.zeros(1, dtype=np.int64))
        assert env.render() != "" and "@" in env.render()
    finally:
        env.close()
        plain.close()
