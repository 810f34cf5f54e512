"""Staging: what the actor and the rollout hand to the device. On the CPU it must be the numpy buffer
itself (no copy, the old path); the pinned CUDA path runs where torch sees a GPU."""

import numpy as np
import pytest
import torch

from pufferlib.train.ppo.staging import Staging


def test_cpu_tensor_shares_the_numpy_buffer():
    obs = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Staging("cpu").tensor(obs)
    obs[0, 0] = 42.0
    assert t.dtype == torch.float32 and t[0, 0].item() == 42.0  # a view, not a copy
    assert Staging("cpu").tensor(np.array([True, False]), torch.float32).tolist() == [1.0, 0.0]


def test_cpu_stack_returns_the_arrays():
    rewards, terms = np.zeros(5, np.float32), np.ones(5, bool)
    out = Staging("cpu").stack([rewards, terms])
    assert out[0] is rewards and out[1] is terms and not Staging("cpu").pinned


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to torch")
def test_cuda_copies_through_reused_pinned_buffers():
    staging = Staging("cuda")
    seen = []
    for step in range(50):  # the buffer is reused: every copy must arrive before it is overwritten
        obs = np.full((1024, 121), step, np.uint8)
        t = staging.tensor(obs)
        rewards, terms = np.full(1024, step, np.float32), np.zeros(1024, bool)
        r, d = staging.stack([rewards, terms])
        seen.append((int(t.float().mean().item()), float(r[0].item()), float(d.sum().item())))
    assert seen == [(s, float(s), 0.0) for s in range(50)]
    buffers = list(staging._buffers.values())
    assert len(buffers) == 2 and all(b.is_pinned() for b, _ in buffers)
