"""PPO's update: train.update_epochs epochs of minibatch steps over one rollout (see ppo/__init__.py
for the rollout layout)."""

from __future__ import annotations

import collections
from typing import Any

import torch
from torch import nn

from pufferlib.train.ppo import precision as precisions
from pufferlib.train.ppo.loss import ppo_loss
from pufferlib.train.ppo.minibatch import minibatches, samples
from pufferlib.train.ppo.optimizer import Optimizer
from pufferlib.train.ppo.rollout import Experience
from pufferlib.train.scale import distributed


def update(
    policy: nn.Module,
    optimizer: Optimizer,
    exp: Experience,
    adv: torch.Tensor,
    returns: torch.Tensor,
    tc: dict[str, Any],
    recurrent: bool,
) -> dict[str, float]:
    """train.update_epochs epochs of train.num_minibatches minibatches (stopped early past
    train.target_kl); the mean of each loss term and the value function's explained variance.
    Each minibatch's forward pass and loss run under train.precision's autocast (precision.py); the
    backward pass and the optimizer step outside it, on the float32 parameters."""
    data = samples(exp, adv, returns, recurrent, tc["bptt_horizon"])
    if len(data["values"]) == 0:
        return {}
    stats: dict[str, list[torch.Tensor]] = collections.defaultdict(list)
    params = [p for p in policy.parameters() if p.requires_grad]
    device = exp.values.device
    for _epoch in range(tc["update_epochs"]):
        for mb in minibatches(data, tc["num_minibatches"]):
            with precisions.autocast(device, tc["precision"]):
                loss, terms = ppo_loss(policy, mb, tc, recurrent)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            clip_grad_norm(params, tc["max_grad_norm"])
            optimizer.step()
            for name, value in terms.items():
                stats[name].append(value.detach())  # read once after the epochs: no sync per minibatch
        if tc["target_kl"] and distributed.agreed_mean(stats["approx_kl"][-1].item()) > tc["target_kl"]:
            break
    out = {name: float(torch.stack(values).mean()) for name, values in stats.items()}
    out["explained_variance"] = explained_variance(exp.values[exp.valid], returns[exp.valid])
    return out


def explained_variance(y_pred: torch.Tensor, y_true: torch.Tensor) -> float:
    """1 - Var(returns - values) / Var(returns); NaN where the returns do not vary."""
    var = y_true.var() if y_true.numel() > 1 else torch.tensor(0.0)
    return float("nan") if var == 0 else float(1 - (y_true - y_pred).var() / var)


def clip_grad_norm(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ (the same scaling of the same global L2 norm) in three tensor
    ops, which for a small policy on the CPU costs a third of torch's version."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(())
    norm = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads]))
    torch._foreach_mul_(grads, (max_norm / (norm + 1e-6)).clamp(max=1.0))
    return norm
