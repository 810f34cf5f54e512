"""CleanRL's policy API over vanilla torch policies: get_value and get_action_and_value.

Logits may be a tensor (Discrete), a list of tensors (MultiDiscrete: log-probs and entropies are
summed over branches) or a torch Normal (Box). Where the observation is a Dict with an
`action_mask` entry (1 = allowed) of the same width as the logits, masked actions are never sampled.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributions import Normal

from pufferlib.pytorch import nativize_tensor


def _masked(logits: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return logits
    return logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min)


def sample_logits(logits, action: torch.Tensor | None = None, mask: torch.Tensor | None = None):
    """(action, log_prob, entropy) for one batch of logits; `action` given = evaluate it instead."""
    if isinstance(logits, Normal):
        if action is None:
            action = logits.sample()
        return action, logits.log_prob(action).sum(-1), logits.entropy().sum(-1)
    if isinstance(logits, torch.Tensor):
        return _categorical(_masked(logits, mask), action)
    masks = [None] * len(logits) if mask is None else list(mask.split([lg.shape[-1] for lg in logits], -1))
    if action is not None:
        action = action.reshape(-1, len(logits))
    branches = [
        _categorical(_masked(lg, m), None if action is None else action[:, i])
        for i, (lg, m) in enumerate(zip(logits, masks, strict=True))
    ]
    action = torch.stack([b[0] for b in branches], dim=-1)
    log_prob = torch.stack([b[1] for b in branches], -1).sum(-1)
    entropy = torch.stack([b[2] for b in branches], -1).sum(-1)
    return action, log_prob, entropy


def _categorical(logits: torch.Tensor, action: torch.Tensor | None):
    """What torch's Categorical(logits=...) gives (a sample, log_prob, entropy) in a few tensor ops:
    its Python-level setup costs ~10x more than the math for the small batches of a rollout step.
    Sampling is Gumbel-max (argmax of log-probabilities plus Gumbel noise), exact for a categorical."""
    logp = logits.log_softmax(-1)
    if action is None:
        gumbel = torch.empty_like(logp).exponential_().log_()
        action = (logp - gumbel).argmax(-1)
    action = action.reshape(-1)
    log_prob = logp.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    return action, log_prob, entropy


def action_mask(policy: nn.Module, x: torch.Tensor) -> torch.Tensor | None:
    native = getattr(policy, "native", None)
    if not native or "action_mask" not in native:
        return None
    return nativize_tensor(x, native)["action_mask"]


class Policy(nn.Module):
    """Wraps a policy whose forward(obs) returns (logits, value)."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        _, value = self.policy(x)
        return value

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        logits, value = self.policy(x)
        action, log_prob, entropy = sample_logits(logits, action, action_mask(self.policy, x))
        return action, log_prob, entropy, value

    def forward(self, x: torch.Tensor, action: torch.Tensor | None = None):
        """`policy(obs)` is `policy.get_action_and_value(obs)`, as in PufferLib."""
        return self.get_action_and_value(x, action)


class RecurrentPolicy(nn.Module):
    """Wraps a pufferlib.models.LSTMWrapper: the same API plus the recurrent state."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def get_value(self, x: torch.Tensor, state=None, starts: torch.Tensor | None = None):
        (_, value), state = self.policy(x, state, starts)
        return value, state

    def get_action_and_value(
        self,
        x: torch.Tensor,
        state=None,
        action: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
    ):
        (logits, value), state = self.policy(x, state, starts)
        flat_x = x.reshape(-1, *self.policy.obs_shape)
        mask = action_mask(self.policy.policy, flat_x)
        action, log_prob, entropy = sample_logits(logits, action, mask)
        return action, log_prob, entropy, value, state

    def forward(
        self,
        x: torch.Tensor,
        state=None,
        action: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
    ):
        """`policy(obs, state)` is `policy.get_action_and_value(obs, state)`."""
        return self.get_action_and_value(x, state, action, starts)
