"""CleanRL's policy API over vanilla torch policies: get_value and get_action_and_value.

Logits may be a tensor (Discrete), a list of tensors (MultiDiscrete: log-probs and entropies are
summed over branches) or a torch Normal (Box: CleanRL's ppo_continuous_action Gaussian, log-probs
and entropies summed over the action's dimensions). A Gaussian's sample is returned, stored and
scored as drawn; the env clips it into the Box (pufferlib.emulation), as CleanRL's ClipAction
wrapper does, so the log-prob is that of the unclipped sample, exactly as in CleanRL.

Action masks. An env declares one with an `action_mask` entry in its Dict observation: a 0/1 per
action (Discrete), or per action of every branch, concatenated (MultiDiscrete); 1 = allowed.
Masked actions get zero probability: never sampled, and the log-probs and entropy that PPO trains
on are those of the masked distribution, the one the actions were drawn from. `Policy(policy,
env)` finds the mask in the env's observation layout, so any policy class is masked; without
`env` it uses the policy's own `native` layout (as pufferlib.models.Default keeps one).
"""

from __future__ import annotations

import functools
import itertools
import math

import torch
from gymnasium import spaces
from torch import nn
from torch.distributions import Normal

from pufferlib import APIUsageError
from pufferlib.pytorch import nativize_dtype, nativize_tensor

MaskLayout = dict  # {"action_mask": leaf}: what nativize_tensor needs to view the mask in a flat row


def _masked(logits: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return logits
    return logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min)


def sample_logits(
    logits,
    action: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    entropy: bool = True,
):
    """(action, log_prob, entropy) for one batch of logits; `action` given = evaluate it instead;
    `entropy=False` leaves the entropy out (None): a rollout step stores only the log-prob.
    Always in float32: logits from a forward pass under bfloat16 autocast (train.precision bf16) are
    taken back to float32 first, since PPO's ratio exp(new - old log-prob) needs more than bfloat16's
    8-bit mantissa."""
    logits = as_fp32(logits)
    if isinstance(logits, Normal):
        if action is None:
            action = logits.sample()
        batch = action.shape[0]
        log_prob = logits.log_prob(action).reshape(batch, -1).sum(-1)
        return action, log_prob, logits.entropy().reshape(batch, -1).sum(-1) if entropy else None
    if isinstance(logits, torch.Tensor):
        return _categorical(_masked(logits, mask), action, entropy)
    return _branches(list(logits), action, mask, entropy)


def as_fp32(logits):
    """A policy head's output (a tensor, a list of tensors, a torch Normal) in float32, where autocast
    made it bfloat16 or float16; float32 is returned as it is."""
    low = (torch.bfloat16, torch.float16)
    if isinstance(logits, torch.Tensor):
        return logits.float() if logits.dtype in low else logits
    if isinstance(logits, Normal):
        if logits.loc.dtype not in low and logits.scale.dtype not in low:
            return logits
        return Normal(logits.loc.float(), logits.scale.float(), validate_args=False)
    if isinstance(logits, list | tuple) and any(x.dtype in low for x in logits):
        return [as_fp32(x) for x in logits]
    return logits


@functools.cache
def _widths(sizes: tuple[int, ...], device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor, int]]:
    """A MultiDiscrete's branches grouped by width: per width, the branches' indices and their logits'
    columns in the concatenated row."""
    starts = [0, *itertools.accumulate(sizes)]
    groups = []
    for width in sorted(set(sizes)):
        ids = [i for i, n in enumerate(sizes) if n == width]
        cols = [starts[i] + j for i in ids for j in range(width)]
        groups.append((torch.tensor(ids, device=device), torch.tensor(cols, device=device), width))
    return groups


def _branches(
    logits: list[torch.Tensor], action: torch.Tensor | None, mask: torch.Tensor | None, entropy: bool
):
    """A MultiDiscrete's branches, those of one width at a time: a gridnet policy's thousands of
    branches (microrts: 7 per map cell, 4 widths) cost a few ops per width, not a few per branch."""
    sizes = tuple(lg.shape[-1] for lg in logits)
    flat = torch.cat(logits, -1)
    batch = flat.shape[0]
    if mask is not None:
        flat = _masked(flat, mask.reshape(batch, -1))
    sampled = action is None
    action = flat.new_empty((batch, len(sizes)), dtype=torch.long) if sampled else action.reshape(batch, -1)
    log_prob = total = flat.new_zeros(batch)
    for ids, cols, width in _widths(sizes, flat.device):
        group = flat[:, cols].view(batch, len(ids), width)
        picked, lp, ent = _categorical(group, None if sampled else action[:, ids], entropy)
        if sampled:
            action[:, ids] = picked
        log_prob = log_prob + lp.sum(-1)
        if entropy:
            total = total + ent.sum(-1)
    return action, log_prob, total if entropy else None


def _categorical(logits: torch.Tensor, action: torch.Tensor | None, entropy: bool = True):
    """What torch's Categorical(logits=...) gives (a sample, log_prob, entropy) in a few tensor ops:
    its Python-level setup costs ~10x more than the math for the small batches of a rollout step.
    Sampling is Gumbel-max (argmax of log-probabilities plus Gumbel noise), exact for a categorical."""
    logp = logits.log_softmax(-1)
    if action is None:
        gumbel = torch.empty_like(logp).exponential_().log_()
        action = (logp - gumbel).argmax(-1)
    action = action.reshape(logp.shape[:-1])
    log_prob = logp.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)
    return action, log_prob, -(logp.exp() * logp).sum(-1) if entropy else None


def mask_layout(env) -> MaskLayout | None:
    """Where `env`'s observation rows carry their action mask (None if they carry none).

    Raises APIUsageError when the mask cannot belong to the action space: a mask needs Discrete or
    MultiDiscrete actions and one entry per action (per action of every branch).
    """
    native = nativize_dtype(getattr(env, "emulated", None))
    if not isinstance(native, dict) or not isinstance(native.get("action_mask"), tuple):
        return None
    leaf = native["action_mask"]
    width = math.prod(leaf[1])
    space = env.single_action_space
    if isinstance(space, spaces.Discrete):
        actions = int(space.n)
    elif isinstance(space, spaces.MultiDiscrete):
        actions = int(space.nvec.sum())
    else:
        raise APIUsageError(
            f"{_name(env)}: the observation carries an action_mask, but the action space is {space}; "
            "masks need Discrete or MultiDiscrete actions (rename the entry if it is not a mask)"
        )
    if width != actions:
        raise APIUsageError(
            f"{_name(env)}: the observation's action_mask has {width} entries but the action space {space} "
            f"has {actions} actions; give one 0/1 per action (MultiDiscrete: per action of every branch, "
            "branches concatenated)"
        )
    return {"action_mask": leaf}


def _name(env) -> str:
    return str(getattr(env, "name", None) or type(env).__name__)


def _policy_layout(policy: nn.Module) -> MaskLayout | None:
    native = getattr(policy, "native", None)
    if isinstance(native, dict) and isinstance(native.get("action_mask"), tuple):
        return {"action_mask": native["action_mask"]}
    return None


def read_mask(layout: MaskLayout | None, x: torch.Tensor) -> torch.Tensor | None:
    """The (batch, actions) mask inside flat observation rows `x`, or None without a layout."""
    if layout is None:
        return None
    return nativize_tensor(x, layout)["action_mask"].reshape(x.shape[0], -1)


def action_mask(policy: nn.Module, x: torch.Tensor) -> torch.Tensor | None:
    """The mask in `x` where the policy's own `native` layout has one (PufferLib-style policies)."""
    return read_mask(_policy_layout(policy), x)


class Policy(nn.Module):
    """Wraps a policy whose forward(obs) returns (logits, value). Give `env` to honour its action
    mask whatever the policy class (see the module docstring)."""

    def __init__(self, policy: nn.Module, env=None) -> None:
        super().__init__()
        self.policy = policy
        self.mask_layout = mask_layout(env) if env is not None else _policy_layout(policy)

    def action_mask(self, x: torch.Tensor) -> torch.Tensor | None:
        """The (batch, actions) 0/1 mask in observation rows `x`, or None if the env has none."""
        return read_mask(self.mask_layout, x)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        _, value = self.policy(x)
        return value

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        logits, value = self.policy(x)
        action, log_prob, entropy = sample_logits(logits, action, self.action_mask(x))
        return action, log_prob, entropy, value

    def forward(self, x: torch.Tensor, action: torch.Tensor | None = None):
        """`policy(obs)` is `policy.get_action_and_value(obs)`, as in PufferLib."""
        return self.get_action_and_value(x, action)


class RecurrentPolicy(nn.Module):
    """Wraps a pufferlib.models.LSTMWrapper: the same API plus the recurrent state."""

    def __init__(self, policy: nn.Module, env=None) -> None:
        super().__init__()
        self.policy = policy
        inner = getattr(policy, "policy", policy)
        self.mask_layout = mask_layout(env) if env is not None else _policy_layout(inner)

    def action_mask(self, x: torch.Tensor) -> torch.Tensor | None:
        """The mask in observation rows `x` ((B, *obs) or (B, T, *obs): flattened to B*T rows)."""
        if self.mask_layout is None:
            return None
        return read_mask(self.mask_layout, x.reshape(-1, *self.policy.obs_shape))

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
        action, log_prob, entropy = sample_logits(logits, action, self.action_mask(x))
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
