"""Multiprocessing honours the process-wide start method and never sets one itself."""

import functools
import multiprocessing

import numpy as np
import pytest
from _vector_envs import counter

import pufferlib.vector
from pufferlib import APIUsageError


@pytest.fixture
def method(request):
    old = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method(request.param, force=True)
    yield request.param
    multiprocessing.set_start_method(old, force=True)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"], indirect=True)
def test_uses_the_global_method(method):
    with pufferlib.vector.make(
        counter, backend="multiprocessing", num_envs=2, num_workers=2, seed=7
    ) as vecenv:
        assert vecenv.start_method == method
        obs, _ = vecenv.reset()
        np.testing.assert_array_equal(obs[:, 0], [7, 8])
        obs, rewards, *_ = vecenv.step([1, 3])
        np.testing.assert_array_equal(rewards, [1, 3])
    assert multiprocessing.get_start_method(allow_none=True) == method


def test_does_not_fix_the_method_when_unset():
    old = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method(None, force=True)
    try:
        pufferlib.vector.make(counter, backend="multiprocessing", num_envs=2, num_workers=2).close()
        assert multiprocessing.get_start_method(allow_none=True) is None
    finally:
        multiprocessing.set_start_method(old, force=True)


def _local_creator():
    return lambda buf=None, seed=0: counter(buf=buf, seed=seed)


@pytest.mark.parametrize("method", ["spawn"], indirect=True)
def test_unpicklable_creator_gets_advice(method):
    with pytest.raises(APIUsageError, match=r"'spawn' start method pickles the env creators.*top level"):
        pufferlib.vector.make(_local_creator(), backend="multiprocessing", num_envs=2, num_workers=2)


@pytest.mark.parametrize("method", ["fork"], indirect=True)
def test_fork_accepts_local_creators(method):
    creator = functools.partial(_local_creator())
    with pufferlib.vector.make(creator, backend="multiprocessing", num_envs=2, num_workers=2) as vecenv:
        vecenv.reset()
