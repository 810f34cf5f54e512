"""The act step: one batch from `vecenv.recv()` in, actions (and what PPO stores) out.

Training rollouts (ppo.collect) and evaluation (evaluation.evaluate) both act through `Actor`, so
they agree on what an episode start is and on the recurrent state each agent row carries.

Episode starts. Emulated envs (pufferlib.emulation) deliver an episode's final observation with
terminal/truncation set and reset on the next send, ignoring the action chosen for it: that row
is "reset-only" (not valid for training) and the observation after it starts an episode. Native
envs reset themselves: the observation that arrives with the done already starts the next one.
A row that was padding (mask False) also starts an episode when its agent appears. An LSTM's
state is zeroed before every episode start.

Action masks: where the env's observation has an `action_mask` entry (the agent's `action_mask`,
pufferlib.frameworks.cleanrl), masked actions are never chosen, sampled or greedy. A
continuous-control head (a torch Normal) samples, or takes its mean; the sample is kept as drawn
(the env clips it into its Box).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.distributions import Normal

import pufferlib
from pufferlib.frameworks.cleanrl import RecurrentPolicy, as_fp32, sample_logits
from pufferlib.train.ppo import precision as precisions
from pufferlib.train.ppo.staging import Staging


def episodes_in(info: dict) -> int:
    """How many episodes an episode info stands for: a native env's info holds the means of `n`
    (pufferlib.ocean.native), an emulated env's is one episode."""
    n = info.get("n", 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


@dataclass
class Step:
    """What one act step produced for the rows of one batch (tensors on the actor's device)."""

    obs: torch.Tensor
    action: torch.Tensor
    logprob: torch.Tensor | None  # None when acting greedily
    value: torch.Tensor  # (rows,)
    starts: torch.Tensor  # float: the observation begins an episode
    done: np.ndarray  # the observation ends an episode (terminal or truncation)
    valid: np.ndarray  # a real transition starts here: agent present and not reset-only
    state: tuple[torch.Tensor, torch.Tensor] | None  # the LSTM state before this step (rows, hidden)


class Actor:
    """Acts for every agent row of one vector env; keeps per row its LSTM state and episode flags.

    `policy` is a cleanrl Policy or RecurrentPolicy (or its torch.compile'd twin); `greedy` takes
    the most likely action instead of sampling; `precision` is train.precision (bf16: the forward
    pass under bfloat16 autocast, precision.py).
    """

    def __init__(
        self, vecenv, policy: nn.Module, device: str, greedy: bool = False, precision: str = "fp32"
    ) -> None:
        rows = int(vecenv.num_agents)
        self.device = device
        self.precision = precision
        self.staging = Staging(device)  # CUDA: pinned host buffers, non-blocking copies
        self.greedy = greedy
        self.module = policy.policy  # forward(obs) -> (logits, value); LSTMWrapper: (obs, state, starts)
        self.recurrent = isinstance(policy, RecurrentPolicy)
        self.action_mask = policy.action_mask  # obs -> (rows, actions) 0/1 mask, or None
        self.resets_on_send = pufferlib.resets_on_send(vecenv.driver_env)
        self.last_done = np.ones(rows, dtype=bool)
        self.last_mask = np.ones(rows, dtype=bool)
        self.state: tuple[torch.Tensor, torch.Tensor] | None = None
        self.hidden = 0
        if self.recurrent:
            self.hidden = self.module.hidden_size
            zeros = torch.zeros(rows, self.hidden, device=device)
            self.state = (zeros, zeros.clone())

    @torch.no_grad()
    def __call__(self, obs, terminals, truncations, ids: np.ndarray, masks: np.ndarray) -> Step:
        """Act on one batch; `ids` are its agent rows (recv's agent_ids), `masks` a copy of its masks."""
        done = np.asarray(terminals, dtype=bool) | np.asarray(truncations, dtype=bool)
        if self.resets_on_send:
            starts_np = self.last_done[ids] | ~self.last_mask[ids]
            valid = masks & ~done
        else:
            starts_np = done | ~self.last_mask[ids]
            valid = masks
        device = self.device
        obs_t = self.staging.tensor(np.asarray(obs))
        starts = self.staging.tensor(starts_np, torch.float32)
        state = None
        with precisions.autocast(device, self.precision):
            if self.state is None:
                logits, value = self.module(obs_t)
            else:
                ids_t = torch.from_numpy(ids).to(device)
                state = (self.state[0][ids_t], self.state[1][ids_t])
                (logits, value), (h, c) = self.module(obs_t, state, starts)
                self.state[0][ids_t], self.state[1][ids_t] = h.float(), c.float()  # bf16: kept as float32
        logits = as_fp32(logits)  # sampling and log-probs in float32 (bf16: precision.py)
        mask = self.action_mask(obs_t)
        if self.greedy:
            action, logprob = greedy(logits, mask), None
        else:
            action, logprob, _ = sample_logits(logits, None, mask, entropy=False)
        self.last_done[ids] = done
        self.last_mask[ids] = masks
        return Step(obs_t, action, logprob, value.reshape(-1).float(), starts, done, valid, state)


def greedy(logits, mask: torch.Tensor | None) -> torch.Tensor:
    """The most likely action (the mean of a Normal); masked actions are never chosen."""
    if isinstance(logits, Normal):
        return logits.mean
    if isinstance(logits, torch.Tensor):
        return (logits if mask is None else logits.masked_fill(mask == 0, float("-inf"))).argmax(-1)
    masks = [None] * len(logits) if mask is None else mask.split([lg.shape[-1] for lg in logits], -1)
    picks = [
        lg if m is None else lg.masked_fill(m == 0, float("-inf"))
        for lg, m in zip(logits, masks, strict=True)
    ]
    return torch.stack([lg.argmax(-1) for lg in picks], dim=-1)
