"""The envs stage builds Kinetix's registered programs into the image (kinetix_jax.py): a fresh container
makes, resets, steps and renders kinetix/Kinetix-S-SymbolicFlat-MultiDiscrete from them (1 level and 32),
tracing nothing, importing no kinetix and compiling nothing again (the image is built on this machine, so
its CPU matches), and the image's `pip check` leaves exactly the lines envs.txt accepts for kinetix-env."""

import json

import pytest
from _repo import REPO

pytestmark = pytest.mark.docker

ENVS_TXT = REPO / "docker" / "constraints" / "envs.txt"

PROBE = """
import json, pathlib, sys, numpy as np
from pufferlib import environments
for num_envs in (1, 32):  # the smoke check's and `puffer train`'s
    env = environments.make("kinetix/Kinetix-S-SymbolicFlat-MultiDiscrete", num_envs=num_envs)
    env.reset(seed=0)
    env.step(np.zeros((env.num_agents, 6), np.int64))
frame = env.render()  # the Pixels twin's program, built into the image for `puffer eval --video`
home = pathlib.Path.home() / ".cache/pufferlib"
entries = list((home / "jax").glob("*-cache"))
print(json.dumps({"traced": env._engine.p.traced, "kinetix": "kinetix" in sys.modules,
                  "stored": sorted(p.name for p in (home / "kinetix").glob("*")),
                  "compiled": sorted(p.name for p in entries if not p.is_symlink()),
                  "linked": sum(p.is_symlink() for p in entries), "num_envs": env.num_agents,
                  "frame": [list(frame.shape), str(frame.dtype), float(frame.std())]}))
"""


def test_kinetix_loads_its_programs_from_the_image(lib_container):
    out = lib_container.run_and_wait(["python", "-c", PROBE], timeout=300)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["traced"] is False and found["kinetix"] is False, found
    assert found["stored"] == [], f"traced and stored programs the image should hold: {found}"
    assert found["compiled"] == [], f"compiled again instead of loading the image's executables: {found}"
    assert found["linked"] > 0 and found["num_envs"] == 32, found
    shape, dtype, spread = found["frame"]
    assert shape == [125, 125, 3] and dtype == "uint8" and spread > 0, found


def test_pip_check_leaves_only_the_accepted_kinetix_lines(lib_container):
    out = lib_container.run_and_wait(["pip", "check"], timeout=120, expect=None)  # 1: the accepted lines
    found = {line for line in out.stdout.splitlines() if line.startswith("kinetix-env ")}
    accepted = {
        line.removeprefix("# unmet: ")
        for line in ENVS_TXT.read_text().splitlines()
        if line.startswith("# unmet: kinetix-env ")
    }
    assert found == accepted
