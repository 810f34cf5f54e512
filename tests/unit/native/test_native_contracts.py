"""C envs written to PufferLib's 3.0 and 4.0 binding contracts, unchanged, through `puffer build-native PATH`
(pufferlib/ocean/contracts): built, registered, mapped, trained, and every guard shown red on a broken folder.

The two envs under tests/native/contracts are ours, written as a PufferLib user would write them: corridor to
the 3.0 contract (corridor.py, corridor.h, binding.c including ../env_binding.h, corridor.ini), beacon to the
4.0 contract (binding.c defining OBS_SIZE... and including vecenv.h, beacon.h, beacon.ini; 2 agents an env).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _repo import REPO

from pufferlib.ocean.contracts import audit, build, ini, load

ENVS = REPO / "tests" / "native" / "contracts"
PUFFER = [sys.executable, "-m", "pufferlib.cli"]


def puffer(
    *args: str, home: Path, cwd: Path | None = None, timeout: int = 300
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PUFFER_NATIVE_HOME": str(home)}
    return subprocess.run([*PUFFER, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """Both test envs built by the real command into a home of their own."""
    home = tmp_path_factory.mktemp("native-home")
    done = puffer("build-native", str(ENVS / "corridor"), str(ENVS / "beacon"), home=home)
    assert done.returncode == 0, done.stderr
    home.joinpath("build.out").write_text(done.stdout)
    return home


def copy_env(src: str, tmp_path: Path, name: str) -> Path:
    """A copy of a test env folder renamed `name` (its files renamed and their names replaced)."""
    folder = tmp_path / name
    folder.mkdir()
    for path in (ENVS / src).iterdir():
        text = path.read_text().replace(src, name)
        (folder / path.name.replace(src, name)).write_text(text)
    return folder


def test_build_names_each_contract_and_lists_what_the_ini_leaves_out(home):
    out = home.joinpath("build.out").read_text()
    assert "built ocean/corridor (pufferlib-3.0)" in out
    assert "observations 8 float32, actions [2], 1 agent(s) per env" in out
    assert "built ocean/beacon (pufferlib-4.0)" in out and "2 agent(s) per env" in out
    assert "not mapped from corridor.ini: [base] package = ocean (named by the binding here)" in out
    assert "[vec] num_envs = 2 (one native PufferEnv steps every instance here)" in out
    assert "[sweep.train.learning_rate] (1 sections: use puffer sweep --param)" in out
    assert out.count("[vec] num_envs") == 1  # listed once
    corridor = out[out.index("from corridor.ini") : out.index("train it: puffer train ocean/corridor")]
    assert "[train] optimizer" not in corridor and "[train] learning_rate" not in corridor  # both mapped


def test_puffer_envs_lists_them_with_their_contract(home):
    done = puffer("envs", "--json", home=home)
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert "[pufferlib-3.0, built from" in rows["ocean/corridor"]["description"]
    assert "[pufferlib-4.0, built from" in rows["ocean/beacon"]["description"]
    assert rows["ocean/beacon"]["multiagent"] and not rows["ocean/corridor"]["multiagent"]


def test_the_ini_is_a_layer_of_the_training_config(home):
    code = (
        "from pufferlib.train import config; c = config.load('ocean/corridor'); print(c['vec'], c['train'])"
    )
    env = {**os.environ, "PUFFER_NATIVE_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert "'backend': 'native', 'num_envs': 256" in out
    assert "'total_timesteps': 400000" in out and "'gamma': 0.95" in out
    assert "'num_steps': 16" in out and "'num_minibatches': 4" in out  # 256 x 16 / 1024
    assert "'optimizer': 'muon', 'learning_rate': 0.03" in out  # its own optimizer at its own rate
    assert "'update_epochs': 1" in out and "'vf_coef': 2.0" in out  # PufferLib 3.0's default.ini beneath


@pytest.mark.parametrize("name, floor", [("corridor", 0.95), ("beacon", 10.0)])
def test_puffer_train_learns_it_unchanged(home, tmp_path, name, floor):
    """Random play: corridor reaches the end within its time limit in about a third of episodes (return ~0.3),
    beacon names 1 cue in 4 (return ~4 of 16)."""
    done = puffer(
        "train", f"ocean/{name}", "--train.total-timesteps", "100000", "--json", home=home, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["mean_return"] > floor, summary


def test_random_play_is_far_below_the_trained_floor(home):
    env = load.make("corridor", root=home, num_envs=64, length=8)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns = []
    for _ in range(400):
        infos = env.step(rng.integers(0, 2, 64))[4]
        returns += [i["episode_return"] for i in infos if "episode_return" in i]
    env.close()
    assert np.mean(returns) < 0.8


def test_a_name_that_collides_with_a_shipped_binding_is_refused_naming_both(home, tmp_path):
    folder = copy_env("corridor", tmp_path, "cartpole")
    done = puffer("build-native", str(folder), home=home)
    assert done.returncode == 2
    assert "ocean/cartpole is already a shipped binding" in done.stderr and str(folder) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_python_side_that_declares_less_than_the_c_writes_is_refused_before_the_first_step(home, tmp_path):
    folder = copy_env("corridor", tmp_path, "narrow")
    py = folder / "narrow.py"
    py.write_text(py.read_text().replace("shape=(length,)", "shape=(length - 1,)"))
    done = puffer("build-native", str(folder), home=home)
    assert done.returncode == 2, done.stdout
    assert "narrow wrote past the end of its observations buffer" in done.stderr
    assert "declares (7,) float32 per agent row" in done.stderr
    assert not (home / "narrow").exists()  # nothing of a refused build is left registered


@pytest.mark.parametrize(
    "breakage, message",
    [
        ("no_binding", "has no binding.c"),
        ("world_writable", "is world-writable"),
        ("no_contract", "follows no contract known here"),
        ("compile_error", "failed to compile"),
        ("bad_name", "must be lowercase letters"),
    ],
)
def test_a_folder_that_cannot_be_built_is_refused_with_the_fix(home, tmp_path, breakage, message):
    folder = copy_env("corridor", tmp_path, "broken")
    if breakage == "no_binding":
        (folder / "binding.c").unlink()
    elif breakage == "world_writable":
        os.chmod(folder / "broken.h", 0o666)
    elif breakage == "no_contract":
        (folder / "binding.c").write_text(
            (folder / "binding.c").read_text().replace("../env_binding.h", "x.h")
        )
    elif breakage == "compile_error":
        (folder / "broken.h").write_text((folder / "broken.h").read_text() + "\nint oops = ;\n")
    else:
        folder = folder.rename(tmp_path / "Broken")
    done = puffer("build-native", str(folder), home=home)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_pl3_handles_are_checked_not_dereferenced(home):
    env = load.make("corridor", root=home, num_envs=2, length=8)
    binding = sys.modules["pufferlib.ocean.corridor.binding"]
    with pytest.raises(ValueError, match="not a live vec handle"):
        binding.vec_step(12345)
    with pytest.raises(IndexError, match=r"env index must be in \[0, 2\)"):
        binding.vec_render(env.c_envs, 2)
    env.close()
    with pytest.raises(ValueError, match="not a live vec handle"):
        binding.vec_close(env.c_envs)  # closed twice


def test_pl3_actions_outside_the_space_never_reach_the_c(home):
    env = load.make("corridor", root=home, num_envs=2, length=8)
    env.reset(seed=0)
    for bad in ([0, 2], [-1, 0], [0.5, 1.0], [0, 2**32]):  # 2**32 would wrap to 0 in the int32 buffer
        with pytest.raises(ValueError, match="action"):
            env.step(np.array(bad))
    env.step(np.array([1, 0]))
    # actions in the buffer's own dtype are checked in C by vec_step, before any env steps
    assert env._checked_in_c
    before = env.observations.copy()
    for bad, message in (
        ([0, 2], r"action 2 of row 1 \(branch 0\) is outside \[0, 2\)"),
        ([-1, 0], "action -1 of row 0"),
    ):
        with pytest.raises(ValueError, match=message):
            env.step(np.array(bad, dtype=np.int32))
        assert (env.observations == before).all()
    env.step(np.array([1, 0], dtype=np.int32))
    env.close()


def test_pl3_action_check_covers_every_branch_and_float_actions(home):
    """vec_step's one pass over the actions (pt_actions_bad) with several branches a row and with float32
    actions; the bad action is then named, and nothing steps."""
    env = load.make("corridor", root=home, num_envs=1, length=8)
    binding = sys.modules[type(env).__module__].binding
    env.close()
    n, length = 4, 8
    for dtype in (np.int32, np.float32):
        obs = np.zeros((n, length), np.float32)
        acts = np.zeros(n, dtype)
        rew, term, trunc = np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool)
        vec = binding.vec_init(obs, acts, rew, term, trunc, n, 0, length=length)
        binding.vec_reset(vec, 0)
        # rows of 2 branches: [0, 2), [0, 1)
        binding.puffertank_action_bounds(vec, np.array([2, 1], np.uint32))
        acts[:] = [1, 0, 0, 0]
        binding.vec_step(vec)
        before = obs.copy()
        bad = [
            ([0, 0, 0, 1], r"action 1 of row 1 \(branch 1\) is outside \[0, 1\)"),
            ([0, 0, 2, 0], r"row 1 \(branch 0"),
        ]
        if dtype is np.float32:
            bad += [
                ([0.5, 0, 0, 0], r"action 0.5 of row 0 \(branch 0\) is outside \[0, 2\) or not whole"),
                ([0, 0, np.nan, 0], "action nan of row 1"),
                ([0, 0, 0, -1], "action -1 of row 1"),
                ([0, np.inf, 0, 0], "action inf of row 0"),
            ]
        for values, message in bad:
            acts[:] = values
            with pytest.raises(ValueError, match=message):
                binding.vec_step(vec)
            assert (obs == before).all(), (dtype, values)
        acts[:] = [1, 0, 1, 0]
        binding.vec_step(vec)
        binding.vec_close(vec)


def test_pl3_rewards_and_terminals_are_written_every_step(home):
    env = load.make("corridor", root=home, num_envs=4, length=8)
    env.reset(seed=0)
    for _ in range(40):
        env.rewards[:] = np.nan
        env.terminals.view(np.uint8)[:] = 0xFF
        env.step(np.ones(4, dtype=np.int32))
        assert not np.isnan(env.rewards).any() and (env.terminals.view(np.uint8) <= 1).all()
    env.close()


def test_pl4_actions_are_range_checked_and_a_missing_kwarg_is_named(home):
    env = load.make("beacon", root=home, num_envs=3, horizon=16)
    assert env.num_agents == 6 and env.single_observation_space.shape == (4,)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 4 of row 5 \(branch 0\) is outside \[0, 4\)"):
        env.step(np.array([0, 1, 2, 3, 0, 4]))
    env.close()
    with pytest.raises(TypeError, match="my_init reads kwarg 'horizon', which is not set"):
        load.make("beacon", root=home, num_envs=1)


def test_both_pass_the_ladder_and_a_planted_fault_fails_its_rung(home, tmp_path):
    for name in ("corridor", "beacon"):
        assert audit.audit(home / name) == {"rung": None, "finding": None, "failed": {}, "notes": []}
    # a heap write one past a block the game allocates, on a boundary action (0 at the corridor's start):
    # harmless without a sanitizer (malloc's slack), reported by the sanitizer build
    folder = copy_env("corridor", tmp_path, "overrun")
    header = folder / "overrun.h"
    fault = "if (a == 0 && env->pos == 0) { int* t = malloc(4 * sizeof(int)); t[4] = a; free(t); }\n"
    header.write_text(
        header.read_text().replace("    int a = env->actions[0];\n", "    int a = env->actions[0];\n" + fault)
    )
    built = build.build(folder, root=tmp_path / "home")
    found = audit.audit(tmp_path / "home" / built.name)
    assert found["rung"] == "asan" and found["finding"].startswith("overrun/overrun.h:39:"), found
    # a game that places its agent by a hidden global counter (a wall clock would not do: pt_rand.h draws a
    # 3.0 env's clock from its seeded stream): the same seed gives different traces
    folder = copy_env("corridor", tmp_path, "counted")
    header = folder / "counted.h"
    counted = "static int placed = 0;\n    env->pos = placed++ % (env->length / 2);"
    text = header.read_text().replace("env->pos = rand() % (env->length / 2);", counted)
    assert text != header.read_text()
    header.write_text(text)
    built = build.build(folder, root=tmp_path / "home")
    assert audit.audit(tmp_path / "home" / built.name)["rung"] == "seeding"
    # a binding that drops 64 KB of heap each env it makes, never touched: RSS stays flat, the heap does not
    folder = copy_env("corridor", tmp_path, "leaky")
    binding = folder / "binding.c"
    head = "static int my_init(Env* env, PyObject* args, PyObject* kwargs) {"
    leak = f"static void* volatile kept;\n\n{head}\n    kept = malloc(1 << 16);"
    text = binding.read_text().replace(head, leak)
    assert text != binding.read_text()
    binding.write_text(text)
    built = build.build(folder, root=tmp_path / "home")
    found = audit.audit(tmp_path / "home" / built.name)
    assert found["rung"] == "lifecycle" and found["finding"].endswith("(64 KB a cycle)"), found


def test_ini_mapping_rules(tmp_path):
    path = tmp_path / "x.ini"
    path.write_text(
        "[base]\nrnn_name = Recurrent\n[env]\nnum_envs = 64\nwidths = [32]\n[vec]\nnum_envs = 2\n"
        "[train]\noptimizer = adam\nlearning_rate = 3e-4\nbatch_size = 8192\nminibatch_size = 2048\n"
        "prio_alpha = 0.8\n"
    )
    mapped = ini.mapped(path, agents_per_env=2)
    assert mapped.config["vec"] == {"backend": "native", "num_envs": 64}
    assert mapped.config["env"] == {"widths": [32]}
    assert mapped.config["train"] == {
        "optimizer": "adam",
        "learning_rate": 3e-4,
        "num_steps": 64,
        "num_minibatches": 4,
    }
    assert mapped.config["rnn"] == {"enabled": True}
    assert mapped.unmapped == [
        "[train] prio_alpha = 0.8 (no such setting here)",
        "[vec] num_envs = 2 (one native PufferEnv steps every instance here)",
    ]


def test_a_pufferlib3_ini_is_read_over_its_default_ini(tmp_path):
    """What a 3.0 env's .ini leaves unset is PufferLib 3.0's default.ini: Muon, 64 steps, one epoch, its
    one-layer Default policy; the .ini's own keys win. An optimizer we lack keeps ours, and its rate."""
    path = tmp_path / "x.ini"
    path.write_text("[env]\nnum_envs = 256\n[train]\nlearning_rate = 0.05\nminibatch_size = 4096\n")
    config = ini.mapped(path, defaults=ini.PL3_DEFAULTS).config
    assert config["train"]["optimizer"] == "muon"
    assert config["train"]["learning_rate"] == 0.05
    assert (config["train"]["num_steps"], config["train"]["num_minibatches"]) == (64, 4)
    assert (config["train"]["update_epochs"], config["train"]["gamma"]) == (1, 0.995)
    assert config["policy"] == {"hidden_size": 128, "num_layers": 1}
    assert ini.mapped(path).config["train"] == {"num_minibatches": 4}  # a 4.0 .ini alone: no default.ini
    path.write_text("[train]\noptimizer = sgd\nlearning_rate = 0.1\n")
    odd = ini.mapped(path, defaults=ini.PL3_DEFAULTS)
    assert "optimizer" not in odd.config["train"] and "learning_rate" not in odd.config["train"]
    assert odd.unmapped[:2] == [
        "[train] optimizer = sgd (ours are muon and adam)",
        "[train] learning_rate = 0.1 (for an optimizer not named here: ours stays at its own rate)",
    ]


def test_a_failed_rebuild_keeps_the_last_good_build(home, tmp_path):
    folder = tmp_path / "corridor"
    shutil.copytree(ENVS / "corridor", folder)
    (folder / "corridor.h").write_text("int oops = ;\n")
    before = (home / "corridor" / "manifest.json").read_text()
    done = puffer("build-native", str(folder), home=home)
    assert done.returncode == 2
    assert (home / "corridor" / "manifest.json").read_text() == before
