"""models.decode: the action head and the value head as one matrix product (a Discrete or MultiDiscrete
head) compute what the two heads compute apart, forward and backward, on the same parameters; a Box head
keeps its Normal."""

import pytest
import torch
from gymnasium import spaces
from torch import nn

from pufferlib.models import ActionHead, decode


def _outputs(logits, value):
    if isinstance(logits, torch.distributions.Normal):
        return [logits.mean, logits.stddev, value]
    return [*(logits if isinstance(logits, list) else [logits]), value]


@pytest.mark.parametrize(
    "space",
    [spaces.Discrete(4), spaces.MultiDiscrete([3, 4, 2]), spaces.Box(-1, 1, (2, 3))],
    ids=["discrete", "multidiscrete", "box"],
)
def test_one_product_is_the_two_heads(space):
    torch.manual_seed(0)
    actor, value = ActionHead(space, 16), nn.Linear(16, 1)
    hidden = torch.randn(64, 16, requires_grad=True)
    fused = _outputs(*decode(actor, value, hidden))
    apart = _outputs(actor(hidden), value(hidden))
    assert [t.shape for t in fused] == [t.shape for t in apart]
    for a, b in zip(fused, apart, strict=True):
        torch.testing.assert_close(a, b)
    params = [hidden, *actor.parameters(), *value.parameters()]
    weights = [torch.randn_like(t) for t in fused]  # a loss that weighs every output
    grads = [
        torch.autograd.grad(sum((w * t).sum() for w, t in zip(weights, out, strict=True)), params)
        for out in (fused, apart)
    ]
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b)
