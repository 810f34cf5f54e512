"""The clipped PPO objective of one minibatch (CleanRL's ppo.py, with per-sample weights for the
padded steps of recurrent segments)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def ppo_loss(
    policy: nn.Module, mb: dict[str, torch.Tensor], tc: dict[str, Any], recurrent: bool
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """(loss, its terms and diagnostics: policy_loss, value_loss, entropy, approx_kl, clipfrac)."""
    if recurrent:
        weights = mb["weights"].reshape(-1)
        _, newlogprob, entropy, newvalue, _ = policy.get_action_and_value(
            mb["obs"],
            (mb["h0"], mb["c0"]),
            action=mb["actions"].reshape(-1, *mb["actions"].shape[2:]),
            starts=mb["starts"],
        )
    else:
        weights = None
        _, newlogprob, entropy, newvalue = policy.get_action_and_value(mb["obs"], mb["actions"])
    old_logprob, old_value = mb["logprobs"].reshape(-1), mb["values"].reshape(-1)
    adv, returns = mb["adv"].reshape(-1), mb["returns"].reshape(-1)
    newvalue = newvalue.reshape(-1).float()  # under bf16 autocast the value head's output is bfloat16
    clip = tc["clip_coef"]

    logratio = newlogprob - old_logprob
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = mean((ratio - 1) - logratio, weights)
        clipfrac = mean(((ratio - 1).abs() > clip).float(), weights)
    if tc["norm_adv"]:
        centre = mean(adv, weights)
        adv = (adv - centre) / (mean((adv - centre) ** 2, weights).sqrt() + 1e-8)

    pg_loss = mean(torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)), weights)
    if tc["clip_vloss"]:
        clipped = old_value + (newvalue - old_value).clamp(-clip, clip)
        v_loss = 0.5 * mean(torch.max((newvalue - returns) ** 2, (clipped - returns) ** 2), weights)
    else:
        v_loss = 0.5 * mean((newvalue - returns) ** 2, weights)
    entropy_loss = mean(entropy, weights)
    loss = pg_loss - tc["ent_coef"] * entropy_loss + tc["vf_coef"] * v_loss
    terms = {
        "policy_loss": pg_loss,
        "value_loss": v_loss,
        "entropy": entropy_loss,
        "approx_kl": approx_kl,
        "clipfrac": clipfrac,
    }
    return loss, terms


def mean(x: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    """The mean of x, or its weighted mean."""
    if weights is None:
        return x.mean()
    return (x * weights).sum() / weights.sum().clamp(min=1)
