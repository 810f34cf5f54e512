"""The registry: names, close-match errors, availability with install hints, `puffer envs`."""

import json
import os
import subprocess
import sys

import pytest

import pufferlib.environments as environments
from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.environments.registry import Binding, UnknownEnvironmentError


def test_ocean_and_classic_control_registered():
    names = {b.name for b in environments.bindings()}
    for env in (
        "squared",
        "password",
        "stochastic",
        "memory",
        "multiagent",
        "spaces",
        "bandit",
        "performance",
    ):
        assert f"ocean/{env}" in names
    assert "classic_control/CartPole-v1" in names
    assert all("/" in n for n in names)


def test_make_returns_a_ready_puffer_env():
    env = environments.make("ocean/squared", distance_to_target=2)
    assert isinstance(env, PufferEnv)
    assert env.single_observation_space.shape == (5, 5)


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownEnvironmentError, match="Did you mean: ocean/squared"):
        environments.make("ocean/squard")
    with pytest.raises(UnknownEnvironmentError, match="classic_control/CartPole-v1"):
        environments.get("cartpole")


def test_missing_package_gives_the_install_hint():
    binding = Binding(
        name="test/missing",
        make=environments.ocean.make_env,
        kwargs={"name": "squared"},
        extra="nosuchextra",
        requires=("no_such_module_puffer",),
    )
    assert not binding.available()
    with pytest.raises(EnvironmentSetupError, match=r"pip install 'pufferlib\[nosuchextra\]'"):
        binding.make_env()


def test_env_creator_is_picklable():
    import pickle

    creator = environments.get("ocean/bandit").env_creator()
    env = pickle.loads(pickle.dumps(creator))()
    assert env.num_agents == 1


def test_puffer_envs_json():
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--json"], capture_output=True, text=True, check=True
    )
    rows = json.loads(out.stdout)
    assert {"name", "family", "available", "multiagent"} <= rows[0].keys()
    by_name = {r["name"]: r for r in rows}
    assert by_name["ocean/multiagent"]["multiagent"] is True
    assert by_name["ocean/squared"]["available"] is True
    assert len(rows) == len(environments.bindings())


def test_puffer_envs_table_and_bad_family():
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs"], capture_output=True, text=True, check=True
    )
    assert "ocean/squared" in out.stdout and "bindings available" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--family", "nope"], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "families:" in bad.stderr


def test_registry_import_stays_light():
    code = "import sys, pufferlib.environments; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_catalogued_names_are_made_on_demand_but_not_registered():
    registered = {b.name for b in environments.bindings()}
    assert "atari/pong" in registered and "atari/alien" not in registered
    assert "atari/alien" in environments.catalog("atari")
    binding = environments.get("atari/alien")
    assert binding.name == "atari/alien" and binding.family == "atari"
    assert {b.name for b in environments.bindings()} == registered  # get() does not grow the set
    with pytest.raises(UnknownEnvironmentError, match="atari/alien"):
        environments.get("atari/alein")


def test_puffer_envs_all_lists_the_catalog():
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--all", "--json", "--family", "atari"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = [row["name"] for row in json.loads(out.stdout)]
    assert len(names) == 57 and "atari/alien" in names


def puffer(*args, plugins):
    env = {**os.environ, "PUFFERLIB_PLUGINS": plugins}
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_plugin_that_fails_to_import_is_named_and_left_out():
    out = puffer("--help", plugins="missing.module")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert "plugin 'missing.module' (PUFFERLIB_PLUGINS) failed to import" in out.stderr
    assert "ModuleNotFoundError" in out.stderr
    listed = puffer("envs", "--json", plugins="missing.module, json")  # the other plugin still loads
    assert listed.returncode == 0 and "ocean/squared" in listed.stdout


def test_a_command_that_needs_the_failed_plugin_exits_2_naming_it():
    out = puffer("train", "test/raises", plugins="missing.module")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "Unknown environment 'test/raises'" in out.stderr
    assert "Plugin 'missing.module' (PUFFERLIB_PLUGINS) failed to import" in out.stderr
