"""The rollout as training samples, and the shuffled minibatches of each PPO epoch.

Feed-forward policies train on single transitions: the valid rows only (present, not reset-only).
Recurrent policies train on BPTT segments (train.bptt_horizon steps of one row, with the LSTM state
that began them); a segment with any valid step is kept and its invalid steps weigh 0.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from pufferlib.train.ppo.rollout import Experience


def samples(
    exp: Experience, adv: torch.Tensor, returns: torch.Tensor, recurrent: bool, bptt: int
) -> dict[str, torch.Tensor]:
    """Every trainable sample, one per leading index of each tensor."""
    rows, steps = exp.values.shape
    per_step = {
        "obs": exp.obs,
        "actions": exp.actions,
        "logprobs": exp.logprobs,
        "values": exp.values,
        "adv": adv,
        "returns": returns,
    }
    if recurrent:
        segs = rows * (steps // bptt)
        data = {name: x.reshape(segs, bptt, *x.shape[2:]) for name, x in per_step.items()}
        data["weights"] = exp.valid.reshape(segs, bptt).float()
        data["starts"] = exp.starts.reshape(segs, bptt)
        data["h0"], data["c0"] = exp.h0.reshape(segs, -1), exp.c0.reshape(segs, -1)
        keep = data["weights"].sum(1) > 0
    else:
        data = {name: x.reshape(rows * steps, *x.shape[2:]) for name, x in per_step.items()}
        keep = exp.valid.reshape(-1)
    if bool(keep.all()):  # every sample trains (a native env's rows always do): views, no copy
        return data
    rows = keep.nonzero().squeeze(1)
    return {name: x.index_select(0, rows) for name, x in data.items()}


def minibatches(data: dict[str, torch.Tensor], count: int) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch: `count` minibatches of equal size over a fresh permutation (the remainder of
    the division is left out, as in CleanRL). Gathered with index_select: on the CPU, `x[index]`
    (advanced indexing) takes 3-5x as long for the same rows (a 32k-row uint8 minibatch: 6.6 ms
    against 1.2 ms)."""
    total = len(data["values"])
    size = max(1, total // count)
    order = torch.randperm(total, device=data["values"].device)
    for start in range(0, total - size + 1, size):
        index = order[start : start + size]
        yield {name: x.index_select(0, index) for name, x in data.items()}
