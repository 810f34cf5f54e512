"""Each argument rule of vector.make fails with a message that names numbers that would work."""

import numpy as np
import pytest
from _vector_envs import counter

import pufferlib
import pufferlib.vector
from pufferlib import APIUsageError
from pufferlib.vector import Multiprocessing, Serial


def make(**kwargs):
    kwargs.setdefault("backend", Multiprocessing)
    return pufferlib.vector.make(counter, **kwargs)


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (dict(num_envs=6, num_workers=4), r"num_envs=6 must be divisible by num_workers=4.*\[1, 2, 3, 6\]"),
        (dict(num_envs=8, num_workers=2, batch_size=3), r"batch_size=3 must be a multiple of .*=4.*\[4, 8\]"),
        (
            dict(num_envs=6, num_workers=2, batch_size=6, zero_copy=True, overwork=True, seed=0),
            None,
        ),
        (
            dict(num_envs=12, num_workers=2, batch_size=6, zero_copy=True),
            None,
        ),
        (
            dict(num_envs=6, num_workers=6, batch_size=4, zero_copy=True, overwork=True),
            r"zero_copy=True needs num_envs=6 divisible by batch_size=4.*\[1, 2, 3, 6\] or zero_copy=False",
        ),
        (dict(num_envs=2, num_workers=3), r"num_workers=3 > num_envs=2.*\[1, 2\]"),
        (dict(num_envs=4, batch_size=5), r"batch_size=5 > num_envs=4"),
        (dict(num_envs=0), r"num_envs must be a positive integer"),
        (dict(num_envs=2, num_workers=0), r"num_workers must be a positive integer"),
        (dict(num_envs=2, seed="1"), r"seed must be an int"),
        (dict(num_envs=2, workers=2), r"Unknown argument\(s\) workers.*num_workers, batch_size"),
        (dict(num_envs=2, backend="threads"), r"Unknown backend 'threads'"),
    ],
)
def test_layout_rules(kwargs, expected):
    if expected is None:  # valid combinations are accepted
        make(**kwargs).close()
        return
    with pytest.raises(APIUsageError, match=expected):
        make(**kwargs)


def test_oversubscription_needs_overwork(monkeypatch):
    monkeypatch.setattr(pufferlib.vector.multiprocessing, "physical_cores", lambda: 2)
    with pytest.raises(APIUsageError, match=r"num_workers=4 > 2 physical CPU cores.*\[1, 2\].*overwork=True"):
        make(num_envs=4, num_workers=4)
    make(num_envs=4, num_workers=4, overwork=True).close()


def test_default_workers_fit_cores_and_batch(monkeypatch):
    monkeypatch.setattr(pufferlib.vector.multiprocessing, "physical_cores", lambda: 2)
    with make(num_envs=6, batch_size=3) as vecenv:
        assert (vecenv.num_workers, vecenv.envs_per_worker) == (2, 3)
    with make(num_envs=6) as vecenv:
        assert vecenv.num_workers == 2
    with pytest.raises(APIUsageError, match=r"batch_size=2 does not fit.*\[4, 8\], or num_workers=4"):
        make(num_envs=8, batch_size=2)


def test_native_backend_needs_one_env():
    with pytest.raises(APIUsageError, match=r"num_envs must be 1 \(got 4\).*backend=Serial"):
        pufferlib.vector.make(counter, backend=pufferlib.PufferEnv, num_envs=4)
    with pytest.raises(APIUsageError, match=r"backend=PufferEnv takes no num_workers"):
        pufferlib.vector.make(counter, backend=pufferlib.PufferEnv, num_workers=2)


def test_serial_checks_the_same_rules():
    with pytest.raises(APIUsageError, match=r"num_envs=6 must be divisible by num_workers=4"):
        pufferlib.vector.make(counter, backend=Serial, num_envs=6, num_workers=4)
    with pytest.raises(APIUsageError, match=r"batch_size=4.*\[1, 2, 3, 6\]"):
        pufferlib.vector.make(counter, backend=Serial, num_envs=6, batch_size=4)


@pytest.mark.parametrize(
    "creator, args, kwargs, expected",
    [
        ("not callable", None, None, r"env creator 0 is not callable"),
        ([counter] * 3, None, None, r"got 3 env creators for num_envs=2"),
        (counter, None, [1, 2], r"env_kwargs must be a dict"),
        (counter, 5, None, r"env_args must be a tuple or list"),
    ],
)
def test_bad_creators(creator, args, kwargs, expected):
    with pytest.raises(APIUsageError, match=expected):
        pufferlib.vector.make(creator, env_args=args, env_kwargs=kwargs, backend=Serial, num_envs=2)


def test_mismatched_envs_are_refused():
    import functools

    from pufferlib.environments import ocean

    creators = [counter, functools.partial(ocean.make_env, "squared")]
    with pytest.raises(APIUsageError, match=r"env 1"):
        pufferlib.vector.make(creators, backend=Serial, num_envs=2)


@pytest.mark.parametrize("backend", [pufferlib.PufferEnv, Serial, Multiprocessing])
@pytest.mark.parametrize(
    "bad, shown",
    [(1e20, r"1\.?e\+20"), (2**32 + 1, "4294967297"), (-(2**31) - 1, "-2147483649")],
    ids=["1e20", "2**32+1", "below-int32"],
)
def test_an_action_the_buffer_cannot_hold_is_refused_with_its_own_value(backend, bad, shown):
    """The action buffer is int32: casting first would turn 1e20 into INT_MIN and 2**32 + 1 into 1 (a
    valid action). The range check must see the caller's value, in every backend."""
    num_envs = 1 if backend is pufferlib.PufferEnv else 2
    with pufferlib.vector.make(counter, backend=backend, num_envs=num_envs) as vecenv:
        vecenv.reset()
        actions = np.zeros(vecenv.agents_per_batch, dtype=np.asarray(bad).dtype)
        actions[-1] = bad
        with pytest.raises(APIUsageError, match=rf"action [\[\(\w]*{shown}\]*\)? out of range for"):
            vecenv.send(actions)
