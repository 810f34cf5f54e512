"""Families catalogued as unavailable (dm_lab): `puffer envs --all` lists them with the reason,
make() raises it, and `unavailable` wins over an installed module (so a guard that only looked at the
modules would be caught)."""

import subprocess
import sys

import pytest

import pufferlib.environments as environments
from pufferlib.environments import dm_lab
from pufferlib.environments.registry import Binding
from pufferlib.exceptions import EnvironmentSetupError


def puffer_envs(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", *args], capture_output=True, text=True, check=True
    ).stdout


def test_puffer_envs_all_shows_dm_lab_unavailable_with_the_reason():
    lines = [line for line in puffer_envs("--all", "--family", "dm_lab").splitlines() if "dm_lab/" in line]
    assert len(lines) == len(dm_lab.LEVELS)
    for line in lines:
        assert "unavailable: no Python 3.11 build exists" in line
        assert "Python >= 3.13" in line and "Bazel" in line
    assert "0/6 bindings available" in puffer_envs("--all", "--family", "dm_lab")


def test_it_is_not_in_the_registered_set_the_matrix_runs():
    assert environments.bindings("dm_lab") == []


def test_make_says_why():
    with pytest.raises(EnvironmentSetupError, match="dm_lab/lt_chasm is unavailable: "):
        environments.make("dm_lab/lt_chasm")


def test_unavailable_wins_over_an_installed_module():
    present = Binding(name="x/y", make=dm_lab.make_env, extra="", requires=("json",))
    assert present.available()
    marked = Binding(name="x/y", make=dm_lab.make_env, extra="", requires=("json",), unavailable="no build")
    assert not marked.available() and marked.to_json()["unavailable"] == "no build"
    with pytest.raises(EnvironmentSetupError, match="x/y is unavailable: no build"):
        marked.make_env()
