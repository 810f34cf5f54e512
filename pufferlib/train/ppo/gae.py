"""Generalized advantage estimation (Schulman et al. 2016) over each row of a rollout."""

from __future__ import annotations

import numpy as np
import torch

from pufferlib.train.ppo.rollout import Experience


def advantages(
    exp: Experience, gamma: float, gae_lambda: float, bootstrap_truncation: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns). No bootstrap past a true terminal, past padding, or (when
    `bootstrap_truncation` is False) past a truncation; the GAE chain stops at every episode end.

    Computed with numpy on the CPU: the TD errors and decays at once, then one multiply-add per step
    over the rows (a loop of torch ops over the steps costs several times more for small batches)."""
    values, rewards, masks = _host(exp.values), _host(exp.rewards), _host(exp.masks)
    terminals, truncations = _host(exp.terminals), _host(exp.truncations)
    next_values = np.concatenate([values[:, 1:], _host(exp.next_values)[:, None]], axis=1)
    next_masks = np.concatenate([masks[:, 1:], _host(exp.next_masks)[:, None]], axis=1)
    ended = np.maximum(terminals, truncations)
    final = terminals if bootstrap_truncation else ended
    delta = rewards + gamma * next_values * next_masks * (1 - final) - values
    decay = gamma * gae_lambda * next_masks * (1 - ended)
    adv = np.empty_like(values)
    last = np.zeros_like(values[:, 0])
    for t in reversed(range(values.shape[1])):
        last = delta[:, t] + decay[:, t] * last
        adv[:, t] = last
    adv_t = torch.from_numpy(adv).to(exp.values.device)
    return adv_t, adv_t + exp.values


def _host(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy()
