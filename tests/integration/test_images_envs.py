"""Every environment package the envs stage promises imports in the lib image; its rendering settings."""

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
    "Box2D": "Box2D",
    "mujoco": "mujoco",
    "gymnasium MuJoCo envs": "gymnasium.envs.mujoco.half_cheetah_v5",
    "dm_control": "dm_control.suite",
    "shimmy": "shimmy",
    "metaworld": "metaworld",
    "vizdoom": "vizdoom",
    "magent2": "magent2.environments.battle_v4",
    "open-spiel": "pyspiel",
    "crafter": "crafter",
    "craftax": "craftax.craftax_env",
    "jax": "jax",
    "bsuite": "bsuite",
    "highway-env": "highway_env",
    "griddly": "griddly",
    "stable-retro": "stable_retro",
    "tensorboard": "tensorboard",
    "optuna": "optuna",
    "matplotlib": "matplotlib.pyplot",
    "tomli-w": "tomli_w",
    "Ray Tune (puffer sweep; pyarrow without Flight)": "ray.tune",
    "pyarrow's filesystems and Parquet (Ray Tune's storage)": "pyarrow.parquet",
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


def test_rendering_defaults_for_headless_egl(docker_client, lib_image):
    """MUJOCO_GL, llvmpipe in the calling thread, and the NVIDIA `graphics` capability are image settings."""
    env = dict(item.split("=", 1) for item in docker_client.images.get(lib_image).attrs["Config"]["Env"])
    assert env["MUJOCO_GL"] == "egl" and env["PYOPENGL_PLATFORM"] == "egl" and env["LP_NUM_THREADS"] == "0"
    assert set(env["NVIDIA_DRIVER_CAPABILITIES"].split(",")) >= {"compute", "utility", "graphics"}
