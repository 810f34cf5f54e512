"""The Ray backend works inside the lib image (the path to environments on several boxes)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker

SCRIPT = """
import numpy as np
import pufferlib.environments as environments
import pufferlib.vector as vector

creator = environments.get("ocean/bandit").env_creator()
with vector.make(creator, backend=vector.Ray, num_envs=2, num_workers=2, overwork=True, seed=3) as ray_env:
    ray_env.reset(seed=3)
    _, rewards, terminals, _, infos = ray_env.step(np.zeros((2, 1), np.int64))
serial = vector.make(creator, backend=vector.Serial, num_envs=2, seed=3)
serial.reset(seed=3)
_, serial_rewards, _, _, _ = serial.step(np.zeros((2, 1), np.int64))
assert rewards.tolist() == serial_rewards.tolist(), (rewards, serial_rewards)
assert terminals.all() and len(infos) == 2
print("ray ok", rewards.tolist())
"""


def test_ray_backend_in_the_image(lib_container):
    result = lib_container.run_and_wait(
        ["python", "-c", SCRIPT], timeout=300, shm_size="1g", environment={"RAY_USAGE_STATS_ENABLED": "0"}
    )
    assert "ray ok" in result.stdout, str(result)
