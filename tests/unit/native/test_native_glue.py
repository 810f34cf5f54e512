"""The native glue (env_binding.h + NativeEnv): buffer and kwarg checks, logs, close, vector backends,
the optional build, and the ladder's and the fuzz harness's own checks going red on a broken env."""

import collections
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from _native_ladder import Ladder, build_module, fuzz
from _repo import REPO

import pufferlib.vector
from pufferlib import EnvironmentSetupError
from pufferlib.environments import ocean_native
from pufferlib.ocean import native
from pufferlib.ocean.native import NativeEnv, load
from pufferlib.train import config
from pufferlib.train.ppo.rollout import Runner
from pufferlib.train.setup import make_vecenv

cp = load("cartpole")
BROKEN = REPO / "tests" / "native" / "broken" / "binding.c"


def buffers(n=4, obs_dtype=np.float32):
    return [
        np.zeros((n, 4), obs_dtype),
        np.zeros(n, np.int32),
        np.zeros(n, np.float32),
        np.zeros(n, bool),
        np.zeros(n, bool),
        np.ones(n, bool),
    ]


def test_module_constants():
    assert (cp.OBS_SIZE, cp.OBS_DTYPE, cp.ACT_SIZES, cp.RENDER_SHAPE) == (4, "float32", (2,), (200, 300, 3))
    assert cp.LOG_FIELDS[-1] == "n" and cp.KWARGS == ("max_steps",) and cp.num_agents({}) == 1


@pytest.mark.parametrize(
    ("index", "bad", "error", "match"),
    [
        (0, np.zeros((4, 4), np.float64), TypeError, "observations must have dtype float32"),
        (0, np.zeros((4, 8), np.float32)[:, ::2], ValueError, "observations must be C-contiguous"),
        (0, np.zeros((3, 4), np.float32), ValueError, "observations must have 4 rows"),
        (1, np.zeros(4, np.int64), TypeError, "actions must have dtype int32"),
        (2, [0.0] * 4, TypeError, "rewards must be a numpy array"),
        (3, np.zeros(5, bool), ValueError, "terminals must have 4 rows"),
        (5, np.zeros(4, np.float32), TypeError, "masks must have dtype bool"),
    ],
)
def test_vec_init_checks_buffers(index, bad, error, match):
    bufs = buffers()
    bufs[index] = bad
    with pytest.raises(error, match=match):
        cp.vec_init(*bufs, 4, 0, 1, None)
    frozen = buffers()
    frozen[2].flags.writeable = False
    with pytest.raises(ValueError, match="rewards must be C-contiguous, aligned and writeable"):
        cp.vec_init(*frozen, 4, 0, 1, None)


def test_vec_init_checks_counts_and_kwargs():
    with pytest.raises(ValueError, match=r"num_envs must be in 1.."):
        cp.vec_init(*buffers(), 0, 0, 1, None)
    with pytest.raises(ValueError, match=r"num_threads must be in 1..256"):
        cp.vec_init(*buffers(), 4, 0, 0, None)
    with pytest.raises(TypeError, match="unknown keyword 'max_step'; the env takes max_steps"):
        NativeEnv("cartpole", max_step=5)
    with pytest.raises(ValueError, match=r"max_steps must be in 1..1000000, got 0"):
        NativeEnv("cartpole", max_steps=0)
    with pytest.raises(TypeError, match="max_steps must be an int"):
        NativeEnv("cartpole", max_steps=2.5)
    with pytest.raises(ValueError, match=r"reward_food must be in \[-1e\+06, 1e\+06\], got 1e\+09"):
        NativeEnv("snake", reward_food=1e9)  # floats in the message (it once said "[%g, %g]")
    with pytest.raises(TypeError, match=r"reward_food must be a number in \[-1e\+06, 1e\+06\], got 'x'"):
        NativeEnv("snake", reward_food="x")
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        NativeEnv("cartpole", num_envs=0)


def test_logs_are_means_with_n_and_clear():
    env = NativeEnv("cartpole", num_envs=32, max_steps=5)
    env.reset(0)
    infos = []
    for _ in range(5):
        infos += env.step(np.zeros(32, np.int32))[4]
    assert env.truncations.all() and not env.terminals.any()
    assert infos == [
        {"episode_return": 5.0, "episode_length": 5.0, "score": 5.0, "x_terminations": 0.0,
         "angle_terminations": 0.0, "n": 32}
    ]  # fmt: skip
    assert cp.vec_log(env._handle) == {} and env.step(env.actions)[4] == []
    env.close()


def test_step_copies_actions_and_close_is_idempotent():
    env = NativeEnv("cartpole", num_envs=2)
    env.reset(0)
    env.step([1, 0])
    assert env.actions.tolist() == [1, 0]
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="this env is closed"):
        env.step(env.actions)


def test_unavailable_env_names_the_reason_and_fix():
    with pytest.raises(EnvironmentSetupError, match=r"not compiled .* Fix: install gcc and python3-dev"):
        load("nonexistent")
    missing = ocean_native.binding("nonexistent", ocean_native.Native(solved=None)).to_json()
    assert not missing["available"] and "install gcc and python3-dev" in missing["install_hint"]
    listed = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--family", "ocean"], capture_output=True, text=True
    )
    assert "ocean/cartpole" in listed.stdout


def test_record_weights_an_info_by_its_episodes():
    """One info holding the means of 40 episodes counts as 40 (the solve window fills accordingly)."""
    run = SimpleNamespace(deferred=None, episodes=0, episode_stats={}, window=100, metric="episode_return")
    Runner.record(run, [{"episode_return": 10.0, "n": 40}, {"episode_return": 20.0}])
    assert run.episodes == 41 and list(run.episode_stats["episode_return"]) == [10.0] * 40 + [20.0]
    assert "n" not in run.episode_stats
    Runner.record(run, [{"episode_return": 30.0, "n": 500}])
    assert run.episode_stats["episode_return"] == collections.deque([30.0] * 100, maxlen=100)


def test_backends_agree():
    """Serial and Multiprocessing (2 workers, 2 NativeEnvs of 4 instances each) give the same rows."""
    import pufferlib.environments as envs

    creator = envs.get("ocean/cartpole").env_creator()
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 2, (60, 16)).astype(np.int32)
    runs = []
    for backend, kw in (("serial", {}), ("multiprocessing", {"num_workers": 2})):
        vec = pufferlib.vector.make(
            creator, env_kwargs={"num_envs": 4}, backend=backend, num_envs=4, seed=3, **kw
        )
        obs, _ = vec.reset()
        trace, episodes = [obs.copy()], 0
        for a in actions:
            obs, _rewards, terminals, _truncations, infos = vec.step(a)
            trace += [obs.copy(), terminals.copy()]
            episodes += sum(i["n"] for i in infos)
        vec.close()
        runs.append((trace, episodes))
    (a, ea), (b, eb) = runs
    assert ea == eb > 0 and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert len({tuple(r) for r in a[0]}) == 16, "two instances share a seed"


def test_backend_native_runs_vec_num_envs_instances_on_threads():
    import pufferlib.environments as envs

    cfg = config.load("ocean/cartpole", {"vec.num_envs": 64, "vec.num_threads": 2})
    vec = make_vecenv(envs.get("ocean/cartpole"), cfg)
    assert isinstance(vec, NativeEnv) and vec.num_agents == 64 and vec.num_envs == 64
    vec.async_reset(1)
    vec.send(np.zeros(64, np.int32))
    assert vec.recv()[0].shape == (64, 4)
    vec.close()


def test_the_wheel_holds_every_native_env(tmp_path):
    """pip's build of the package (pyproject.toml, our build_ext) compiles one module per env folder,
    though pyproject.toml declares only the template's."""
    tree = tmp_path / "src"
    shutil.copytree(
        REPO / "pufferlib", tree / "pufferlib", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tree)
    (tree / "README.md").write_text("x")
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(tree), "-w",
         str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("pufferlib-*.whl")
    with zipfile.ZipFile(wheel) as z:
        built = {Path(n).name.split(".")[0] for n in z.namelist() if n.endswith(".so")}
    assert built == {f"_{name}" for name in native.names()}


def test_optional_build_without_a_compiler(tmp_path):
    """CC=false: the extension fails to compile, the build still succeeds and builds no module."""
    tree = tmp_path / "src"
    tree.mkdir()
    shutil.copy(REPO / "pyproject.toml", tree)
    (tree / "README.md").write_text("x")
    shutil.copytree(REPO / "pufferlib" / "ocean" / "native", tree / "pufferlib" / "ocean" / "native",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))  # fmt: skip
    (tree / "pufferlib" / "__init__.py").write_text("")
    env = {**os.environ, "CC": "false", "LDSHARED": "false", "PUFFER_NATIVE_ONLY": "cartpole"}
    out = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "build_ext", "--inplace"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'building extension "pufferlib.ocean.native._cartpole" failed' in out.stderr, out.stderr[-2000:]
    assert not list((tree / "pufferlib").rglob("*.so"))


# ------------------------------------------------------------------ the checks themselves go red


def test_ladder_catches_an_unwritten_reward(tmp_path):
    module = build_module(BROKEN, tmp_path, ("BUG_UNWRITTEN",))
    with pytest.raises(AssertionError, match="step 0: rewards element 0 not written"):
        Ladder("broken", module=module).every_element_written()


def test_ladder_catches_a_leak(tmp_path):
    module = build_module(BROKEN, tmp_path, ("BUG_LEAK",))
    with pytest.raises(AssertionError, match="RSS grew"):
        Ladder("broken", module=module).close_frees(num_envs=64)


@pytest.mark.parametrize(
    ("bug", "found"),
    [
        ("BUG_UNWRITTEN", "a reward was not written"),
        ("BUG_OVERFLOW", "heap-buffer-overflow"),
        ("BUG_ACTION", "out of bounds"),
    ],
)
def test_fuzz_catches_bugs(tmp_path, bug, found):
    run = fuzz(BROKEN, tmp_path, 5000, defines=(bug,))
    assert run.returncode != 0 and found in run.stderr, run.stderr[-2000:]


def test_fuzz_passes_the_correct_env(tmp_path):
    run = fuzz(BROKEN, tmp_path, 5000)
    assert run.returncode == 0 and run.stdout.startswith("ok"), run.stderr[-2000:]


def test_the_correct_broken_env_passes_the_ladder(tmp_path):
    ladder = Ladder("broken", module=build_module(BROKEN, tmp_path))
    ladder.every_element_written()
    ladder.close_frees()


def test_build_native_compiles_one_env_and_refuses_unknown_names(tmp_path, capsys):
    from pufferlib.cli import main
    from pufferlib.ocean.native import build

    assert main(["build-native", "nope"]) == 2
    assert "unknown native env nope; one of breakout, cartpole" in capsys.readouterr().err
    target = build.compile_env(build.bindings()["cartpole"], tmp_path)
    spec = importlib.util.spec_from_file_location("_cartpole", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ACT_SIZES == (2,) and not list(tmp_path.glob("*.tmp"))


def test_bench_native_reports_every_native_env_with_the_load(capsys):
    from pufferlib.bench import native as bench

    assert bench.run(64, 0.05, 1, as_json=True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["env"] for r in doc["rows"]} >= {"ocean/cartpole", "ocean/squared"} and len(doc["load"]) == 3
    assert all(r["sps"] > 0 and r["num_envs"] == 64 for r in doc["rows"])


def test_an_unclosed_env_is_freed_by_its_destructor():
    Ladder("cartpole").close_frees(num_envs=256, close=False)


def test_the_fuzz_harness_takes_game_kwargs(tmp_path):
    squared = REPO / "pufferlib" / "ocean" / "native" / "squared" / "binding.c"
    assert fuzz(squared, tmp_path, 2000, kwargs={"distance_to_target": 3}).returncode == 0
    bad = fuzz(squared, tmp_path, 10, kwargs={"distance_to_target": 0})
    assert bad.returncode == 1 and "a PN_KW_ value out of range?" in bad.stderr
    # the C-only build shares the module's kwargs helpers and pn_raise: the same message, on stderr
    assert "ValueError: _squared: distance_to_target must be in 1..64, got 0" in bad.stderr
    typo = fuzz(squared, tmp_path, 10, kwargs={"distance_to_target": "3x"})
    assert typo.returncode == 1 and "TypeError: _squared: distance_to_target must be an int" in typo.stderr
    pl3 = REPO / "pufferlib" / "ocean" / "native" / "squared_pl3" / "binding.c"
    even = fuzz(pl3, tmp_path, 10, kwargs={"size": 10})
    assert even.returncode == 1 and "ValueError: _squared_pl3: size must be odd" in even.stderr


def test_a_handle_only_works_with_its_own_module():
    """A squared handle given to cartpole's functions is refused (their Env structs differ)."""
    squared = NativeEnv("squared")
    with pytest.raises(ValueError, match="incorrect name"):
        cp.vec_step(squared._handle)
    with pytest.raises(ValueError, match="invalid PyCapsule"):
        cp.vec_log(object())
    squared.close()
