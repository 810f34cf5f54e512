"""pufferlib3/<name>: PufferLib 3.0.0's own Ocean envs, built unchanged from its pinned sdist through our 3.0
header and audited by the testing ladder (pufferlib/ocean/contracts/catalog.py, audit.py).

The catalog is built once per version of what builds it (the contract headers and modules, the sdist pin):
~2.5 min on 2 cores, kept under ~/.cache/puffertank/pufferlib3-catalog/<hash> (catalog.cached()). tests/run.sh
fetches the sdist and builds it there before pytest (test_matrix_pufferlib3.py compares the image's catalog
with it); the tests themselves use no network.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _repo import REPO

from pufferlib.ocean.contracts import catalog, load

DOCS = REPO / "docs" / "environments.md"


@pytest.fixture(scope="module")
def built() -> Path:
    sdist = catalog.sdist_cache() / catalog.SDIST
    assert sdist.is_file(), (
        f"{sdist} is missing: tests/run.sh fetches it (python -m pufferlib.ocean.contracts.catalog fetch)"
    )
    return catalog.cached()


def entries(built: Path) -> dict[str, dict]:
    return json.loads((built / catalog.CATALOG).read_text())["envs"]


def test_every_c_env_of_the_sdist_is_available_or_has_its_finding(built):
    envs = entries(built)
    assert len(envs) == 31
    available = [n for n, e in envs.items() if e["available"]]
    assert len(available) >= 21, f"{len(available)} available: {sorted(set(envs) - set(available))} are not"
    for name, entry in envs.items():
        if entry["available"]:
            assert entry["audited"] == list(catalog.AUDIT_RUNGS), name
        else:
            assert entry["rung"] in ("build", "probe", *catalog.AUDIT_RUNGS) and entry["finding"], (
                name,
                entry,
            )


def test_docs_table_is_the_audit(built):
    """docs/environments.md's audit table lists exactly the unavailable envs, each with a rung it failed (an
    env can fail several: grid's seeding depends on the run, its leak does not)."""
    table = dict(re.findall(r"^\| `pufferlib3/(\w+)` \| unavailable: (\w+) \|", DOCS.read_text(), re.M))
    envs = entries(built)
    assert set(table) == {n for n, e in envs.items() if not e["available"]}
    for name, rung in table.items():
        failed = {envs[name]["rung"], *envs[name].get("failed", {})}
        assert rung in failed, f"docs say {name} fails {rung}; the audit: {failed}"


def test_each_available_env_makes_resets_and_steps_through_our_engine(built):
    for name, entry in entries(built).items():
        if not entry["available"]:
            continue
        m, _ = load.manifest(name, built)
        env = load.make(name, root=built, num_envs=2, **dict(m.config.get("env", {})))
        assert list(env.single_observation_space.shape) == m.obs_shape, name
        assert env.num_agents == 2 * m.agents_per_env, name
        env.reset(seed=0)
        for _ in range(16):
            space = env.single_action_space
            actions = np.stack([space.sample() for _ in range(env.num_agents)])
            env.step(actions)
            assert np.isfinite(env.rewards).all(), name
        env.close()


def trace(env, actions: list[np.ndarray]) -> np.ndarray:
    return np.stack([env.step(a)[0].copy() for a in actions])


def test_two_vectors_in_one_process_draw_their_own_rand_streams(built):
    """cpr draws from rand() in its step: two vectors stepped in turn give what each gives alone (pt_rand.h);
    with the process-global rand() the second would consume the first's numbers (the matrix's multiprocessing
    check found this: Serial and Multiprocessing differed)."""
    m, _ = load.manifest("cpr", built)
    kwargs = dict(m.config.get("env", {}))

    def make(seed: int):
        env = load.make("cpr", root=built, num_envs=2, seed=seed, **kwargs)
        env.reset(seed=seed)
        return env

    rng = np.random.default_rng(0)
    space = make(0).single_action_space
    actions = [np.stack([space.sample() for _ in range(2 * m.agents_per_env)]) for _ in range(64)]
    alone = trace(make(0), actions)
    a, b = make(0), make(1)
    together = []
    for act in actions:
        b.step(act[rng.permutation(len(act))])
        together.append(a.step(act)[0].copy())
    np.testing.assert_array_equal(np.stack(together), alone)


def test_puffer_envs_lists_the_catalog_with_its_findings(built):
    env = {**os.environ, "PUFFER_PL3_HOME": str(built)}
    done = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--all", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    rows = {r["name"]: r for r in json.loads(done.stdout) if r["name"].startswith("pufferlib3/")}
    for name, entry in entries(built).items():
        row = rows[f"pufferlib3/{name}"]
        assert row["available"] == entry["available"], name
        if not entry["available"]:
            assert f"it failed the {entry['rung']} rung of our audit" in row["unavailable"], row


def test_puffer_train_learns_pufferlib3_cartpole(built, tmp_path):
    """Random play keeps the pole up ~22 steps; PufferLib's cartpole scores the episode length. Its .ini
    and default.ini ask for Muon at 0.05, one epoch, over 4096 envs; on a CPU budget: Adam, 4 epochs, 512
    envs (170-182 on seeds 1-3 in 300k steps)."""
    env = {**os.environ, "PUFFER_PL3_HOME": str(built)}
    args = [
        "--rnn.enabled",
        "false",
        "--vec.num-envs",
        "512",
        "--train.num-steps",
        "16",
        "--train.num-minibatches",
        "4",
        "--train.optimizer",
        "adam",
        "--train.learning-rate",
        "3e-3",
        "--train.update-epochs",
        "4",
        "--train.total-timesteps",
        "300000",
        "--json",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "train", "pufferlib3/cartpole", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["solve_metric"] == "score" and summary["score"] > 100, summary


def test_the_sdist_must_be_the_pinned_one(tmp_path):
    fake = tmp_path / catalog.SDIST
    fake.write_bytes(b"not the sdist")
    with pytest.raises(SystemExit, match="not the pinned"):
        catalog.unpack(fake, tmp_path / "out")


def test_bench_catalog_times_its_env_code_over_our_header(built, monkeypatch):
    """`puffer bench --pufferlib3 --catalog`: the same class and kwargs on both sides; ours really steps."""
    from pufferlib.bench import pufferlib3

    monkeypatch.setenv("PUFFER_PL3_HOME", str(built))
    assert "cartpole" in pufferlib3.catalog_names("all")
    theirs, ours = pufferlib3.catalog_specs("cartpole")
    assert theirs["kwargs"] == ours["kwargs"] and theirs["kwargs"]["num_envs"] == pufferlib3.AGENTS
    assert theirs["factory"] == "pufferlib.ocean.cartpole.cartpole:Cartpole"
    spec = {**ours, "seconds": 0.2, "warmup_s": 0.05}
    out = json.loads(pufferlib3._driver(Path(sys.executable), "steps", spec, True, 120).splitlines()[-1])
    assert out["agents"] == pufferlib3.AGENTS and out["calls"] > 0 and out["sps"] > 0


@pytest.mark.parametrize(
    ("home", "chosen", "said"),
    [
        ("empty", "all", "python -m pufferlib.ocean.contracts.catalog build"),
        ("built", "tactical", "--catalog: unknown tactical; valid: "),  # catalogued, not available
    ],
)
def test_bench_catalog_refuses_what_it_cannot_time(built, tmp_path, home, chosen, said):
    env = {**os.environ, "PUFFER_PL3_HOME": str(built if home == "built" else tmp_path)}
    cmd = [sys.executable, "-m", "pufferlib.cli", "bench", "--pufferlib3", "--catalog", chosen]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr


RENDER = """
import sys
from pathlib import Path
from pufferlib.ocean.contracts import load
env = load.make("cartpole", root=Path(sys.argv[1]))
env.reset(seed=0)
try:
    env.render()
except RuntimeError as e:
    print(e)
"""


def test_render_without_a_display_is_refused_not_a_crash(built):
    """3.0's c_render opens a raylib window: with no display GLFW fails and the process died (SIGSEGV; `puffer
    play` with the catalog registered did, probing what it can play). The checked class refuses, saying why.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(built)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "draws with raylib into a window" in done.stdout and "--video" in done.stdout, done.stdout
