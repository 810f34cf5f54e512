"""PPO (Schulman et al. 2017) as in CleanRL's ppo.py, over PufferLib vector envs.

One update is four small parts, one file each: `collect` (rollout.py: a rollout into preallocated
tensors, acting through act.Actor, one writer for every batch layout), `advantages` (gae.py),
`samples`/`minibatches` (minibatch.py) and `ppo_loss` (loss.py); `update` below runs the epochs.
loop.py's `learn` alternates them: it builds the envs, the policy and the device (setup.py),
saves checkpoints into the run directory (checkpoint.py, rundir.py) and sends per-update metrics
to hooks (the dashboard, tracking.py).

Rollout layout: every tensor is (rows, steps): one row per agent slot of the vector env
(N = vecenv.num_agents), one column per step (T = train.num_steps). Row n, column t holds the
transition (obs, action) -> (reward, terminal, truncation, next obs = column t + 1).

Episode ends (see act.py). Emulated envs (pufferlib.emulation) deliver the episode's *final*
observation with terminal/truncation set, and reset on the next send, ignoring the action chosen for
it. That row is not a real transition ("reset-only"): it is excluded from the loss and the
statistics. Its value is still useful: on truncation (a time limit, not a true terminal) it
bootstraps the return of the last real transition. Native envs reset themselves (the observation
after a done already starts the next episode), so for them a truncation cannot be bootstrapped and
counts as a terminal.

Multi-agent padding: rows whose mask is False (agent absent) are excluded from the loss, the
statistics and the advantage chain.

Async (vec.batch_size < vec.num_envs): each recv returns some slots (env_ids) and each slot fills
its own row. A slot that completes its T steps before the others is still stepped (the vector env
needs actions for every slot it returns), but only its latest transition is kept, as column 0 of
the next rollout. In the synchronous case no transition is lost: the action chosen for the
observation after the last column is sent before the update, so envs in worker processes step
while the learner trains, and that transition becomes column 0 of the next rollout.
"""

from __future__ import annotations

import collections
from typing import Any

import torch
from torch import nn

from pufferlib.train import distributed
from pufferlib.train import precision as precisions
from pufferlib.train.gae import advantages
from pufferlib.train.loss import ppo_loss
from pufferlib.train.minibatch import minibatches, samples
from pufferlib.train.rollout import Experience, Placement, Runner, action_spec, collect
from pufferlib.train.setup import make_policy, make_vecenv

__all__ = [
    "Experience",
    "Placement",
    "Runner",
    "action_spec",
    "advantages",
    "clip_grad_norm",
    "collect",
    "make_policy",
    "make_vecenv",
    "update",
]


def update(
    agent: nn.Module,
    optimizer: torch.optim.Optimizer,
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
    params = [p for p in agent.parameters() if p.requires_grad]
    device = exp.values.device
    for _epoch in range(tc["update_epochs"]):
        for mb in minibatches(data, tc["num_minibatches"]):
            with precisions.autocast(device, tc["precision"]):
                loss, terms = ppo_loss(agent, mb, tc, recurrent)
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
