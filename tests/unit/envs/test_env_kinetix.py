"""Kinetix bindings: random levels stepped by one exported JAX program, restarts inside it, `solved` in the
infos, seeds, pixels as uint8, render() for symbolic ids, Box and Discrete actions, the program store (a
second process loads what the first traced, without importing kinetix; a damaged file is built again),
and a JAX-safe path for processes forked from one that ran JAX.

Tracing Kinetix's level sampler takes tens of seconds, so the tests share a few programs (one size, one
pool size) in a store of their own for the module (PUFFERLIB_KINETIX_PROGRAMS)."""

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib
import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.environments import kinetix
from pufferlib.environments.support import kinetix_jax

BINDINGS = environments.bindings("kinetix")
SYMBOLIC = "kinetix/Kinetix-S-SymbolicFlat-MultiDiscrete"
PIXELS = "kinetix/Kinetix-S-Pixels-MultiDiscrete"


@pytest.fixture(scope="module", autouse=True)
def store(tmp_path_factory):
    """A program store of this module's own, for this process and its children."""
    require(BINDINGS[0])
    path = tmp_path_factory.mktemp("kinetix-programs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(kinetix_jax.STORE_ENV, str(path))
        yield path


def test_registered_and_catalogued():
    assert sorted(b.name for b in BINDINGS) == sorted(f"kinetix/{name}" for name in kinetix_jax.REGISTERED)
    assert environments.catalog("kinetix") == sorted(f"kinetix/{name}" for name in kinetix_jax.ENVS)
    assert len(kinetix_jax.ENVS) == 18 and environments.get(PIXELS).pixels == (125, 125, 3)


def test_the_training_size_the_image_builds_is_the_train_configs():
    config = tomllib.loads((Path(pufferlib.__file__).parent / "train/configs/kinetix.toml").read_text())
    assert config["env"]["num_envs"] == kinetix_jax.TRAIN_NUM_ENVS
    assert (SYMBOLIC.split("/")[1], kinetix_jax.TRAIN_NUM_ENVS) in kinetix_jax.WARM
    assert environments.make(SYMBOLIC).num_agents == kinetix_jax.DEFAULT_NUM_ENVS == 1


def test_the_action_spaces_are_kinetixs_own_and_its_training_stack_stays_out():
    k = kinetix_jax.load_kinetix()
    static, params = k.static_env_params_from_size("s"), k.EnvParams()
    for name in (
        "Kinetix-S-SymbolicFlat-MultiDiscrete",
        "Kinetix-S-SymbolicFlat-Continuous",
        "Kinetix-S-Pixels-Discrete",
    ):
        _, obs, act = kinetix_jax.ENVS[name]
        env = k.make_kinetix_env(
            k.ActionType.from_string(act), k.ObservationType.from_string(obs), None, params, static
        )
        space = env.action_space(params)
        kind, arg = kinetix_jax.action_space(name)
        if kind == "multi_discrete":
            assert tuple(space.number_of_dims_per_distribution.tolist()) == arg
        elif kind == "box":
            assert space.shape == (arg,) and float(space.low.min()) == -1.0 and float(space.high.max()) == 1.0
        else:
            assert space.n == arg
    assert "kinetix.util" not in sys.modules, "load_kinetix() imported Kinetix's training utilities"


def test_levels_end_restart_and_report_solved():
    env = environments.make(SYMBOLIC, num_envs=4)
    try:
        assert env.single_observation_space.shape == (140,)
        assert env.single_action_space.nvec.tolist() == [3, 3, 3, 3, 2, 2]
        episodes = run_contract(env, steps=300)  # random Kinetix levels end within a few hundred steps
        assert episodes, "no Kinetix episode ended in 300 steps x 4 levels"
        assert {e["solved"] for e in episodes} <= {0.0, 1.0}
        assert all(e["episode_length"] <= 256 for e in episodes)
        assert not env.done  # native: levels restart themselves, the env never waits for reset()
    finally:
        env.close()


def test_same_seed_same_levels_other_seed_other_levels():
    first, again, other = (trace(environments.make(SYMBOLIC, num_envs=4), 20, seed) for seed in (1, 1, 2))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], other[0])


def test_pixels_arrive_as_uint8_frames_and_symbolic_ids_render_the_same_level():
    pixels = environments.make(PIXELS, num_envs=2)
    symbolic = environments.make(SYMBOLIC, num_envs=4)
    try:
        obs, _ = pixels.reset(seed=3)
        assert obs.shape == (2, 125, 125, 3) and obs.dtype == np.uint8 and obs.std() > 0
        np.testing.assert_array_equal(pixels.render(), obs[0])
        symbolic.reset(seed=3)  # level 0 comes from the same first draw of the same key
        np.testing.assert_array_equal(symbolic.render(), obs[0])
    finally:
        pixels.close()
        symbolic.close()


def test_continuous_actions_are_clipped_and_discrete_ones_checked():
    env = environments.make("kinetix/Kinetix-S-SymbolicFlat-Continuous", num_envs=2)
    env.reset(seed=0)
    assert env.single_action_space.shape == (6,)
    env.step(np.full((2, 6), 5.0))  # outside the Box: clipped into it, as emulation does
    with pytest.raises(APIUsageError, match="actions must be finite"):
        env.step(np.full((2, 6), np.nan))
    env = environments.make("kinetix/Kinetix-S-SymbolicFlat-Discrete", num_envs=2)
    env.reset(seed=0)
    assert env.single_action_space.n == 11
    env.step(np.array([0, 10]))
    with pytest.raises(APIUsageError, match=r"2 integers in \[0, 11\)"):
        env.step(np.array([0, 11]))


def test_a_second_process_loads_the_programs_without_kinetix(store):
    environments.make(SYMBOLIC, num_envs=4).reset(seed=0)  # traced and stored here (or earlier)
    code = f"""
import sys, numpy as np
import pufferlib.environments as e
env = e.make({SYMBOLIC!r}, num_envs=4)
env.reset(seed=0)
env.step(np.zeros((4, 6), np.int64))
print(env._engine.p.traced, "kinetix" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]
    kinds = {p.name.split("-")[0] for p in store.iterdir()}
    assert {"sample", "observe", "step"} <= kinds, kinds


def test_a_damaged_program_is_built_again(store):
    kinetix_jax.Programs(SYMBOLIC.split("/")[1], 4, 1)  # stored
    damaged = next(store.glob("observe-Kinetix-S-SymbolicFlat-MultiDiscrete-n4-*"))
    damaged.write_bytes(b"not a program")
    programs = kinetix_jax.Programs(SYMBOLIC.split("/")[1], 4, 1)
    assert programs.traced and damaged.read_bytes() != b"not a program"
    _, levels = programs.levels(np.array([0, 0], np.uint32))
    assert np.asarray(programs.observe(levels)).shape == (4, 140)


def test_a_fork_of_a_jax_process_runs_its_levels_in_a_child():
    """JAX aborts in a forked child; the env notices and steps its levels in a process of its own."""
    code = f"""
import os, sys, numpy as np
import pufferlib.environments as e
parent = e.make({SYMBOLIC!r}, num_envs=4)
parent.reset(seed=0)
pid = os.fork()
if pid == 0:
    env = e.make({SYMBOLIC!r}, num_envs=4)
    obs, _ = env.reset(seed=0)
    frame = env.render()
    print(type(env._engine).__name__, bool((obs == parent.observations).all()), frame.shape, flush=True)
    env.close()
    os._exit(0)
os.waitpid(pid, 0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.stdout.split() == ["Remote", "True", "(125,", "125,", "3)"], out.stderr[-2000:]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown Kinetix id 'Kinetix-XL-SymbolicFlat-MultiDiscrete'"):
        kinetix.make_env("Kinetix-XL-SymbolicFlat-MultiDiscrete")
    with pytest.raises(ValueError, match="resets must be between 1 and num_envs=2"):
        kinetix.make_env("Kinetix-S-SymbolicFlat-MultiDiscrete", num_envs=2, resets=3)
    with pytest.raises(ValueError, match="process must be"):
        kinetix.make_env("Kinetix-S-SymbolicFlat-MultiDiscrete", process="thread")
    env = environments.make(SYMBOLIC, num_envs=4)
    with pytest.raises(APIUsageError, match="before reset"):
        env.step(np.zeros((4, 6), np.int64))
    env.reset()
    with pytest.raises(APIUsageError, match="each action row must lie within MultiDiscrete"):
        env.step(np.full((4, 6), 2))  # a thruster takes 0 or 1
    with pytest.raises(APIUsageError, match=r"4 rows of 6"):
        env.step(np.zeros(4, np.int64))
