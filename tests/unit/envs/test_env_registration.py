"""The environment families register cheaply and completely: names, extras, policies, no heavy imports."""

import subprocess
import sys
import tomllib

import pytest
from _repo import REPO

import pufferlib.environments as environments

FAMILIES = (
    "minigrid",
    "procgen",
    "nethack",
    "minihack",
    "butterfly",
    "atari",
    "box2d",
    "mujoco",
    "dm_control",
    "metaworld",
)
HEAVY = ("torch", "procgen", "gym", "gym3", "nle", "minihack", "minigrid", "ale_py", "pygame", "pymunk")
HEAVY += ("Box2D", "mujoco", "dm_control", "metaworld", "shimmy", "OpenGL")


def test_registering_imports_no_environment_package_and_no_torch():
    code = f"import sys, pufferlib.environments; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("family", FAMILIES)
def test_bindings_name_their_extra_requirements_and_policy(family):
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    bindings = environments.bindings(family)
    assert bindings, f"no {family} bindings registered"
    for binding in bindings:
        assert binding.extra == family and family in " ".join(extras["common"])
        assert binding.requires and binding.smoke.steps > 0 and binding.smoke.seconds > 0
        assert binding.seeding == "full" or binding.seeding.startswith("none")
        if binding.available():
            assert callable(binding.policy_class())


def test_puffer_envs_lists_a_family():
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--family", "procgen"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "procgen/coinrun" in out.stdout and "16 bindings" in out.stdout.splitlines()[-1]
