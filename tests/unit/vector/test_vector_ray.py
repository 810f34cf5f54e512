"""The Ray backend against a local Ray instance: same traces as Serial, async batches, multi-agent masks.

Ray starts slowly, so one instance serves the module and the checks are few.
"""

import functools
import importlib.util
import os
import time

import numpy as np
import pytest
from _strict import skip_or_fail
from _vector_envs import counter, counter_failing_in_env_2, random_actions

import pufferlib.vector
from pufferlib.environments import ocean

if importlib.util.find_spec("ray") is None:
    skip_or_fail("the Ray backend needs the ray extra: pip install 'pufferlib[ray]'")
import ray


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    unit = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the actors import _vector_envs
    path = os.pathsep.join(p for p in (unit, os.environ.get("PYTHONPATH")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield
    ray.shutdown()


def trace(backend, name, **kwargs):
    rng = np.random.default_rng(0)
    creator = functools.partial(ocean.make_env, name)
    out = []
    with pufferlib.vector.make(creator, backend=backend, num_envs=2, seed=4, **kwargs) as vecenv:
        vecenv.async_reset()
        for _ in range(7):
            out += [a.copy() for a in vecenv.recv() if isinstance(a, np.ndarray)]  # with ids and masks
            vecenv.send(random_actions(vecenv, rng))
    return out


@pytest.mark.parametrize("name", ["spaces", "multiagent"])
def test_same_traces_as_serial(name):
    for a, b in zip(trace("serial", name), trace("ray", name, num_workers=2), strict=True):
        np.testing.assert_array_equal(a, b)


def test_async_batches_and_errors():
    with pufferlib.vector.make(
        counter, backend="ray", num_envs=4, num_workers=2, batch_size=2, seed=100
    ) as vecenv:
        assert not ray.is_initialized() or vecenv._owns_ray is False
        vecenv.async_reset()
        seen, deadline = set(), time.monotonic() + 30
        while len(seen) < 4 and time.monotonic() < deadline:  # first-ready: order depends on load
            obs, _rewards, _terminals, _truncations, _infos, ids, masks = vecenv.recv()
            np.testing.assert_array_equal(obs[:, 0], 100 + ids)  # rows match their ids
            assert sorted(ids.tolist()) in ([0, 1], [2, 3]) and masks.all()
            seen |= set(ids.tolist())
            vecenv.send(ids % 4)
        assert seen == {0, 1, 2, 3}
    vecenv = pufferlib.vector.make(counter_failing_in_env_2, backend="ray", num_envs=4, num_workers=2, seed=0)
    vecenv.reset()
    vecenv.step([0] * 4)
    vecenv.step([0] * 4)
    with pytest.raises(pufferlib.vector.WorkerError, match="failed on purpose") as info:
        vecenv.step([0] * 4)
    assert info.value.env_id == 2
    vecenv.close()
