"""EnvPool-style batches: agent ids, observations and masks belong together; every env is served."""

import functools
import time

import numpy as np
import pytest
from _vector_envs import counter

import pufferlib.vector


def run_async(vecenv, recvs: int, until_all: bool = False):
    """recv/send `recvs` times (with until_all, on until every env was returned, for at most 20 s);
    check each batch against the env ids it claims; return the ids seen."""
    seen = []
    ticks: dict[int, int] = {}
    vecenv.async_reset()
    deadline = time.monotonic() + 20
    k = 0
    while k < recvs or (until_all and len(set(seen)) < vecenv.num_agents and time.monotonic() < deadline):
        k += 1
        obs, rewards, _terminals, _truncations, _infos, ids, masks = vecenv.recv()
        assert obs.shape[0] == rewards.shape[0] == ids.shape[0] == masks.shape[0] == vecenv.agents_per_batch
        # Counter's observation starts with its seed, and env i has seed 100 + i: rows match ids
        np.testing.assert_array_equal(obs[:, 0], 100 + ids)
        assert masks.all()
        for i, tick in zip(ids.tolist(), obs[:, 1].astype(int).tolist(), strict=True):
            if i in ticks:  # each env advanced exactly one step (or restarted) since it was last returned
                assert tick == ticks[i] + 1 or (tick == 0 and ticks[i] == 5)
            ticks[i] = tick
        seen.extend(ids.tolist())
        vecenv.send(ids % 4)  # action = a function of the id, echoed back in obs[:, 2]
    return seen


@pytest.mark.parametrize("zero_copy", [True, False])
def test_multiprocessing_batches(zero_copy):
    with pufferlib.vector.make(
        counter,
        backend="multiprocessing",
        num_envs=8,
        num_workers=2,
        batch_size=4,
        zero_copy=zero_copy,
        seed=100,
    ) as vecenv:
        assert vecenv.agents_per_batch == 4 and vecenv.num_agents == 8
        # first-ready batches may return the same worker many times in a row on a loaded machine
        seen = run_async(vecenv, 40, until_all=True)
        # batches are whole workers: rows 0-3 or rows 4-7, never a mix
        batches = np.array(seen).reshape(-1, 4)
        assert {tuple(sorted(b)) for b in batches.tolist()} <= {(0, 1, 2, 3), (4, 5, 6, 7)}
        assert set(seen) == set(range(8))


def test_multiprocessing_returns_first_ready_worker():
    """Worker 0's envs are slow: with batch_size = one worker, worker 1 comes back more often."""
    creators = [functools.partial(counter, sleep_s=0.05)] * 2 + [counter] * 2
    with pufferlib.vector.make(
        creators, backend="multiprocessing", num_envs=4, num_workers=2, batch_size=2, seed=100
    ) as vecenv:
        seen = run_async(vecenv, 30)
    fast = sum(i >= 2 for i in seen)
    assert fast > len(seen) * 0.6, f"fast worker served {fast} of {len(seen)} rows"


def test_serial_batches_in_turn():
    with pufferlib.vector.make(counter, backend="serial", num_envs=6, batch_size=2, seed=100) as vecenv:
        seen = run_async(vecenv, 9)
    assert seen == [0, 1, 2, 3, 4, 5] * 3


def test_actions_reach_the_rows_they_were_sent_for():
    with pufferlib.vector.make(
        counter,
        backend="multiprocessing",
        num_envs=4,
        num_workers=2,
        batch_size=2,
        zero_copy=False,
        seed=100,
    ) as vecenv:
        vecenv.async_reset()
        for _ in range(10):
            obs, *_, ids, _ = vecenv.recv()
            vecenv.send((ids + 1) % 4)
            obs, _rewards, *_, ids, _ = vecenv.recv()
            stepped = obs[:, 1] > 0
            np.testing.assert_array_equal(obs[stepped, 2], (ids[stepped] + 1) % 4)
            vecenv.send((ids + 1) % 4)
