"""ppo.clip_grad_norm scales gradients exactly as torch.nn.utils.clip_grad_norm_ does."""

import pytest
import torch
from torch import nn

from pufferlib.train.ppo.update import clip_grad_norm


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_same_norm_and_gradients_as_torch(max_norm):
    torch.manual_seed(0)
    layers = [nn.Linear(4, 64), nn.Linear(64, 64), nn.Linear(64, 3)]
    params = [p for layer in layers for p in layer.parameters()]
    for p in params:
        p.grad = torch.randn_like(p) * 3
    params[-1].grad = None  # a parameter without a gradient is left alone
    grads = [None if p.grad is None else p.grad.clone() for p in params]
    want = nn.utils.clip_grad_norm_(params, max_norm)
    expected = [None if p.grad is None else p.grad.clone() for p in params]
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    torch.testing.assert_close(clip_grad_norm(params, max_norm), want)
    for p, e in zip(params, expected, strict=True):
        assert (p.grad is None) == (e is None)
        if e is not None:
            torch.testing.assert_close(p.grad, e)
