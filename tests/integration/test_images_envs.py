"""Every environment package the envs stage promises imports in the lib image."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.docker

PACKAGES = {
    "gymnasium": "gymnasium",
    "gym (for procgen)": "gym",
    "ale-py (Atari)": "ale_py",
    "minigrid": "minigrid",
    "nle (NetHack)": "nle",
    "minihack": "minihack",
    "procgen2": "procgen",
    "pettingzoo": "pettingzoo",
    "pettingzoo butterfly": "pettingzoo.butterfly.pistonball_v6",
    "pymunk": "pymunk",
    "pygame-ce": "pygame",
    "numpy": "numpy",
}

SCRIPT = """
import importlib, json, sys, traceback
out = {}
for module in sys.argv[1:]:
    try:
        importlib.import_module(module)
        out[module] = "ok"
    except Exception:
        out[module] = traceback.format_exc()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def imports(docker_client, lib_image) -> dict[str, str]:
    from pufferlib.tank.containers import RunSpec, run_captured

    spec = RunSpec(
        lib_image,
        ["python", "-c", SCRIPT, *PACKAGES.values()],
        gpus="none",
        timeout=180,
        env={"SDL_VIDEODRIVER": "dummy"},
        labels={"puffertank.test": "1"},
    )
    result = run_captured(docker_client, spec)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", PACKAGES)
def test_env_package_imports(imports, name):
    assert imports[PACKAGES[name]] == "ok", imports[PACKAGES[name]]
