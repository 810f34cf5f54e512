"""The envs stage compiles Craftax's registered program into the image (craftax_jax.py): a fresh container
makes, resets and steps craftax/Craftax-Classic-Symbolic-v1 from those executables, compiling neither its
reset nor its step again (the image is built on this machine, so its CPU matches)."""

import json

import pytest

pytestmark = pytest.mark.docker

PROBE = """
import json, pathlib, numpy as np
from pufferlib import environments
env = environments.make("craftax/Craftax-Classic-Symbolic-v1")
env.reset(seed=0)
env.step(np.zeros(env.num_agents, np.int64))
cache = pathlib.Path.home() / ".cache/pufferlib/jax"
entries = [p for p in cache.glob("jit_*-cache") if p.name.startswith(("jit_reset", "jit_step"))]
print(json.dumps({"linked": sorted(p.name for p in entries if p.is_symlink()),
                  "compiled": sorted(p.name for p in entries if not p.is_symlink())}))
"""


def test_craftax_loads_its_program_from_the_image(lib_container):
    out = lib_container.run_and_wait(["python", "-c", PROBE], timeout=300)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["compiled"] == [], f"compiled again instead of loading the image's executables: {found}"
    assert any(name.startswith("jit_step") for name in found["linked"]), found
