"""Serial and Multiprocessing give identical traces for the same seeds (sync API), under fork and spawn."""

import functools
import multiprocessing

import numpy as np
import pytest
from _vector_envs import random_actions

import pufferlib.vector
from pufferlib.environments import ocean


@pytest.fixture(params=["fork", "spawn"])
def start_method(request):
    old = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method(request.param, force=True)
    yield request.param
    multiprocessing.set_start_method(old, force=True)


def trace(backend, name: str, seed: int, steps: int = 40, reseed: int | None = None, **kwargs) -> np.ndarray:
    creator = functools.partial(ocean.make_env, name)
    rng = np.random.default_rng(123)  # the same actions for every backend
    rows = []
    with pufferlib.vector.make(creator, backend=backend, num_envs=4, seed=seed, **kwargs) as vecenv:
        obs, _ = vecenv.reset(seed=reseed)
        rows.append(obs.astype(np.float64).ravel())
        for _ in range(steps):
            obs, rewards, terminals, truncations, _ = vecenv.step(random_actions(vecenv, rng))
            rows.append(np.concatenate([obs.astype(np.float64).ravel(), rewards, terminals, truncations]))
    return np.concatenate(rows)


@pytest.mark.parametrize("name", ["spaces", "stochastic", "multiagent"])
def test_serial_equals_multiprocessing(name, start_method):
    serial = trace(pufferlib.vector.Serial, name, seed=3)
    mp = trace(pufferlib.vector.Multiprocessing, name, seed=3, num_workers=2)
    np.testing.assert_array_equal(serial, mp)


def test_reset_seed_reseeds_every_backend_alike():
    a = trace(pufferlib.vector.Serial, "spaces", seed=0, reseed=11)
    b = trace(pufferlib.vector.Multiprocessing, "spaces", seed=5, reseed=11, num_workers=2)
    np.testing.assert_array_equal(a, b)


def test_seeds_matter():
    a = trace(pufferlib.vector.Serial, "spaces", seed=3)
    b = trace(pufferlib.vector.Serial, "spaces", seed=4)
    assert not np.array_equal(a, b)
