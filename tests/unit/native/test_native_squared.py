"""Native ocean/squared: the ladder, the Python Squared's rules step for step, and its registration."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from _native_ladder import Ladder
from _repo import REPO

import pufferlib.environments as environments
from pufferlib.ocean.native import NativeEnv
from pufferlib.ocean.squared import Squared

ladder = Ladder("squared", kwargs={"distance_to_target": 2, "num_targets": 3})


@pytest.mark.parametrize(
    "rung",
    [
        "same_seed_identical",
        "seeds_differ",
        "reset_reseeds",
        "actions_refused",
        "every_element_written",
        "episodes_logged",
        "renders",
        "close_frees",
    ],
)
def test_ladder(rung):
    getattr(ladder, rung)()


def test_fuzz_under_asan_and_ubsan(tmp_path):
    ladder.fuzz_clean(tmp_path)


@pytest.mark.parametrize("kwargs", [{}, {"distance_to_target": 2, "num_targets": 3, "max_ticks": 9}])
def test_same_rules_as_the_python_env(kwargs):
    """Started on the native env's targets, the Python Squared fed the same moves gives the same
    observations, rewards, terminations and truncations."""
    env = NativeEnv("squared", num_envs=1, **kwargs)
    py = Squared(**kwargs)
    py.reset(seed=0)
    obs = env.reset(0)[0]
    rng = np.random.default_rng(0)
    ended = 0

    def sync(grid):
        py.grid, py.pos, py.hits, py.tick = grid.copy(), np.array([py.center, py.center]), 0, 0

    sync(obs[0])
    for _ in range(600):
        a = int(rng.integers(8))
        expect, reward, terminated, truncated, _ = py.step(a)
        obs, rewards, terms, truncs, infos = env.step(np.array([a], np.int32))
        assert (reward, terminated, truncated) == (pytest.approx(rewards[0]), terms[0], truncs[0])
        if terminated or truncated:
            ended += 1
            assert infos[0]["n"] == 1 and infos[0]["score"] == pytest.approx(py.hits / py.num_targets)
            assert infos[0]["episode_length"] == py.tick
            sync(obs[0])
        else:
            assert np.array_equal(expect, obs[0])
    assert ended > 10
    env.close()


def test_registered_natively_with_the_python_shapes():
    binding = environments.get("ocean/squared")
    assert binding.native and binding.solved == Squared.SOLVED
    env = environments.make("ocean/squared", distance_to_target=2)
    assert isinstance(env, NativeEnv) and env.single_observation_space.shape == (5, 5)
    env.close()


def test_one_name_one_env_the_python_twin_is_squared_py():
    """ocean/squared is the C env; the Python game is ocean/squared_py, both registered side by side."""
    twin = environments.get("ocean/squared_py")
    assert not twin.native and twin.available() and twin.solved == Squared.SOLVED
    env = environments.make("ocean/squared_py", distance_to_target=2)
    assert not isinstance(env, NativeEnv) and env.single_observation_space.shape == (5, 5)
    env.close()


def test_without_a_compiler_ocean_squared_is_an_error_naming_the_fix(tmp_path):
    """A checkout whose native envs did not compile (the package copied without its .so files): ocean/squared
    stays the C env, unavailable, and says so with the fix (and the twin); no silent swap."""
    shutil.copytree(REPO / "pufferlib", tmp_path / "pufferlib", ignore=shutil.ignore_patterns("*.so"))
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )

    train = run("-m", "pufferlib.cli", "train", "ocean/squared", "--train.run-dir", "")
    assert train.returncode == 2 and "Traceback" not in train.stderr, train.stderr
    assert (
        "native env 'squared' is unavailable" in train.stderr
        and "install gcc and python3-dev" in train.stderr
    )
    made = run("-c", "import pufferlib.environments as e; e.make('ocean/squared')")
    assert "EnvironmentSetupError: ocean/squared needs pufferlib.ocean.native._squared" in made.stderr
    assert "install gcc and python3-dev" in made.stderr and "its Python twin ocean/squared_py" in made.stderr
    listed = run("-m", "pufferlib.cli", "envs", "--family", "ocean").stdout.splitlines()
    assert any(line.startswith("ocean/squared ") and "missing" in line for line in listed)
    assert any(line.startswith("ocean/squared_py ") and line.endswith("ok") for line in listed)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"distance_to_target": 0}, r"distance_to_target must be in 1\.\.64, got 0"),
        ({"num_targets": 9}, r"num_targets must be in 1\.\.8, got 9"),
        ({"size": 3}, "unknown keyword 'size'"),
    ],
)
def test_rejects_bad_config(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        NativeEnv("squared", **kwargs)
