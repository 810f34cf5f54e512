"""ViZDoom bindings: headless screens plus game variables, frame skip, time-outs as truncations, seeds,
and no files left in the working directory."""

import os

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import vizdoom

BINDINGS = environments.bindings("vizdoom")
ISSUE_SCENARIOS = (
    "basic",
    "deadly_corridor",
    "defend_the_center",
    "defend_the_line",
    "health_gathering",
    "health_gathering_supreme",
    "my_way_home",
    "predict_position",
    "take_cover",
)


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _native(env) -> dict:
    from pufferlib import spaces as pspaces

    struct = env.observations[0].view(env.emulated["observation_dtype"])[0]
    return pspaces.read_observation(struct, env.emulated["emulated_observation_space"])


def test_catalog_has_the_bundled_scenarios():
    assert set(ISSUE_SCENARIOS) <= set(vizdoom.SCENARIOS)
    assert environments.catalog("vizdoom") == sorted(f"vizdoom/{s}" for s in vizdoom.SCENARIOS)
    assert {b.name for b in BINDINGS} == {f"vizdoom/{s}" for s in vizdoom.REGISTERED}


@pytest.mark.parametrize("scenario", vizdoom.SCENARIOS)
def test_every_scenario_runs_headless_within_its_spaces(scenario, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    env = environments.make(f"vizdoom/{scenario}")
    try:
        run_contract(env, steps=20)
        ob = _native(env)
        assert ob["screen"].shape == (60, 80, 1) and ob["screen"].dtype == np.uint8
        assert ("gamevariables" in ob) == (
            scenario not in ("my_way_home", "predict_position", "rocket_basic", "simpler_basic")
        )
    finally:
        env.close()
    assert os.listdir(tmp_path) == [], "ViZDoom left files in the working directory"


def test_rgb_full_resolution_and_game_variables():
    env = environments.make("vizdoom/defend_the_center", grey=False, downsample=1, resolution="320x240")
    try:
        env.reset(seed=0)
        ob = _native(env)
        assert ob["screen"].shape == (240, 320, 3) and ob["screen"].std() > 0
        health = list(env.env.variables).index("HEALTH")
        assert ob["gamevariables"][health] == 100.0
        assert env.single_action_space.n == 4  # no-op + TURN_LEFT, TURN_RIGHT, ATTACK
    finally:
        env.close()


def test_timeout_is_a_truncation_and_frame_skip_sets_its_step():
    env = environments.make("vizdoom/basic")  # episode_timeout 300 tics, frame skip 4 -> 75 steps
    try:
        env.reset(seed=0)
        steps = 0
        while not env.done:
            _, _, terminals, truncations, infos = env.step(np.zeros((1, 1), np.int64))  # no-op: nobody dies
            steps += 1
        assert truncations[0] and not terminals[0] and steps == 75 and infos[0]["episode_length"] == 75
    finally:
        env.close()


def test_same_seed_same_episode():
    def make():
        return environments.make("vizdoom/defend_the_center")

    first, again, other = trace(make(), 40, seed=1), trace(make(), 40, seed=1), trace(make(), 40, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown ViZDoom scenario 'deathmatch'"):
        vizdoom.make_env("deathmatch")
    with pytest.raises(ValueError, match="resolution must be one of"):
        vizdoom.make_env("basic", resolution="100x100")
    with pytest.raises(ValueError, match="frame_skip and downsample must be >= 1"):
        vizdoom.make_env("basic", frame_skip=0)
