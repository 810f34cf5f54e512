"""The rollout: its storage (Experience), what persists between rollouts (Runner) and `collect`.

Layout: every tensor is (rows, steps): one row per agent slot of the vector env (N =
vecenv.num_agents), one column per step (T = train.num_steps). Row n, column t holds the transition
(obs, action) -> (reward, terminal, truncation, next obs = column t + 1). ppo.py's docstring says
how episode ends, multi-agent padding and async batches fill it.

One writer: each recv's rows are placed (`Placement`: the column each row's outcome and new
transition go to, as slices when the rows are one contiguous block at one column, which is every
synchronous or Serial batch) and every value is stored by `put` (through numpy on the CPU: one
column of a few rows costs a fraction of torch's indexing).
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
from torch import nn

from pufferlib.pytorch import torch_dtype
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo import memory
from pufferlib.train.ppo.act import Actor, episodes_in


def put(store: torch.Tensor, index: Any, value: Any, src: Any = slice(None)) -> None:
    """store[index] = value[src], cast to the store's dtype; `value` is a tensor or a numpy array,
    `index` and `src` slices, ints or numpy index arrays."""
    if store.device.type == "cpu":
        host = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        store.numpy()[index] = host[src]
        return
    value = value if isinstance(value, torch.Tensor) else torch.from_numpy(np.asarray(value))
    store[_on(index, store.device)] = value[_on(src, value.device)].to(store.device, store.dtype)


def _on(index: Any, device: torch.device) -> Any:
    """A numpy index (or a tuple holding some) as torch indices on `device`."""
    if isinstance(index, tuple):
        return tuple(_on(i, device) for i in index)
    return torch.from_numpy(index).to(device) if isinstance(index, np.ndarray) else index


# ---------------------------------------------------------------------------------------------
# Storage


def action_spec(space: gymnasium.Space) -> tuple[tuple[int, ...], torch.dtype]:
    """Per-row shape and dtype of the actions sample_logits returns for a flat action space."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return (), torch.int64
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return (int(np.prod(space.shape)),), torch.int64
    return tuple(space.shape), torch.float32


# train.solve_metric -> the episode info it averages (win_rate is judged by train/versus.py instead)
METRICS = {"return": "episode_return", "wins": "win", "score": "score"}


def is_episode_info(info: dict) -> bool:
    """An info that reports finished episodes: an episode_return, or a native log's count `n` (PufferLib's
    C envs log means over n episodes, some without a return)."""
    return "episode_return" in info or "n" in info


MIN_MINIBATCH = 2  # samples: advantage normalisation over a minibatch of 1 makes every advantage 0


def check_minibatches(rows: int, steps: int, bptt: int, count: int) -> None:
    """ConfigError when train.num_minibatches splits an update's samples (transitions, or BPTT
    segments of `bptt` steps) into minibatches of fewer than MIN_MINIBATCH."""
    samples = rows * (steps // bptt)
    if samples // count >= MIN_MINIBATCH:
        return
    what = f"{rows:,} agent rows x {steps:,} steps" + (f" / {bptt} (BPTT segments)" if bptt > 1 else "")
    raise ConfigError(
        f"train.num_minibatches {count:,} splits the {samples:,} samples of an update ({what}) into "
        f"minibatches of {samples // count}: use at most {samples // MIN_MINIBATCH:,} (each minibatch needs "
        f"{MIN_MINIBATCH}+ samples), or raise train.num_steps or vec.num_envs"
    )


@dataclass
class Experience:
    """Preallocated rollout tensors, (rows, steps) each, plus what bootstraps the last column."""

    obs: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor  # outcome of the transition in that column
    terminals: torch.Tensor
    truncations: torch.Tensor
    masks: torch.Tensor  # agent present (False = multi-agent padding)
    valid: torch.Tensor  # trains: present and not a reset-only row
    starts: torch.Tensor  # observation begins an episode (LSTM state is zeroed before it)
    next_values: torch.Tensor  # (rows,) value of the observation after the last column
    next_masks: torch.Tensor
    h0: torch.Tensor | None  # LSTM state before each BPTT segment: (rows, steps // bptt, hidden)
    c0: torch.Tensor | None

    def put(self, name: str, index: Any, value: Any, src: Any = slice(None)) -> None:
        """storage[name][index] = value[src] (value: a tensor or a numpy array)."""
        put(getattr(self, name), index, value, src)

    @classmethod
    def allocate(cls, env, rows: int, steps: int, device: str, hidden: int = 0, bptt: int = 1) -> Experience:
        """Zeroed storage of memory.rollout_layout, once `device` is known to have room for it."""
        obs_space = env.single_observation_space
        obs = (tuple(obs_space.shape), torch_dtype(obs_space.dtype))
        layout = memory.rollout_layout(rows, steps, obs, action_spec(env.single_action_space), hidden, bptt)
        memory.check(layout, device)
        zeros = {name: torch.zeros(shape, dtype=t, device=device) for name, (shape, t) in layout.items()}
        return cls(**{"h0": None, "c0": None, **zeros})

    def slot(self) -> dict[str, torch.Tensor]:
        """Storage for one transition per row (the transition in flight between rollouts)."""
        names = ("obs", "actions", "logprobs", "values", "masks", "valid", "starts")
        out = {name: torch.zeros_like(getattr(self, name)[:, 0]) for name in names}
        if self.h0 is not None:
            out["h0"] = torch.zeros_like(self.h0[:, 0])
            out["c0"] = torch.zeros_like(self.c0[:, 0])
        return out


@dataclass
class Runner:
    """What persists across rollouts: the actor (per-row recurrent state and episode flags), each
    row's position in the rollout, the transitions in flight and the episode statistics."""

    vecenv: Any
    actor: Actor
    exp: Experience
    carry: dict[str, torch.Tensor]
    device: str
    bptt: int
    ptr: np.ndarray  # per row: the column its next observation goes to
    episode_stats: dict[str, collections.deque]
    window: int
    sync: bool  # every recv returns every row, in order (batch_size == num_envs): see Placement
    steps: int = 0
    episodes: int = 0
    judge: Callable[[int], float] | None = None  # steps -> score; None: the window's mean of `metric`
    # The episode statistic `score` averages: the return, or (train.solve_metric "wins") the env's `win`
    # info, 1.0 for an episode the agent won against the env's own opponent (microrts' bots), or ("score")
    # the env's own `score` (what PufferLib's C envs log; some log no return at all)
    metric: str = "episode_return"
    deferred: list[dict] | None = None  # distributed: episodes held for the sync (distributed.py)

    @classmethod
    def create(cls, vecenv: Any, policy: nn.Module, cfg: Config, device: str) -> Runner:
        """Storage and per-row state for `vecenv`; `policy` is a cleanrl Policy or RecurrentPolicy."""
        tc = cfg["train"]
        rows = int(vecenv.num_agents)
        actor = Actor(vecenv, policy, device, precision=tc["precision"])
        bptt = tc["bptt_horizon"] if actor.recurrent else 1
        check_minibatches(rows, tc["num_steps"], bptt, tc["num_minibatches"])
        exp = Experience.allocate(vecenv.driver_env, rows, tc["num_steps"], device, actor.hidden, bptt)
        return cls(
            vecenv=vecenv,
            actor=actor,
            exp=exp,
            carry=exp.slot(),
            device=device,
            bptt=bptt,
            ptr=np.zeros(rows, dtype=np.int64),
            episode_stats={},
            window=tc["solve_window"],
            sync=int(vecenv.agents_per_batch) == rows,
            metric=METRICS.get(tc["solve_metric"], "episode_return"),
        )

    @property
    def recurrent(self) -> bool:
        return self.actor.recurrent

    @property
    def resets_on_send(self) -> bool:
        return self.actor.resets_on_send

    def record(self, infos: list[dict]) -> None:
        """Episode statistics (return, length, the env's numeric infos) from recv's infos."""
        if self.deferred is not None:  # every rank records every rank's episodes, at the sync
            self.deferred.extend(info for info in infos if is_episode_info(info))
            return
        for info in infos:
            if not is_episode_info(info):
                continue
            if self.metric not in info:
                reported = ", ".join(k for k in info if k != "n")
                wanted = next(k for k, v in METRICS.items() if v == self.metric)
                raise ConfigError(
                    f"train.solve_metric {wanted} needs an env that reports a `{self.metric}` info per "
                    f"episode; this one reports {reported}. Use train.solve_metric return (or win_rate for a "
                    "self-play game)"
                )
            n = episodes_in(info)  # a native env's info holds the means of n episodes: it counts n times
            self.episodes += n
            for key, value in info.items():
                if key != "n" and isinstance(value, int | float) and not isinstance(value, bool):
                    stats = self.episode_stats.get(key)
                    if stats is None:
                        stats = self.episode_stats[key] = collections.deque(maxlen=self.window)
                    stats.extend(itertools.repeat(value, min(n, self.window)))

    def window_mean(self, key: str) -> float | None:
        values = self.episode_stats.get(key)
        return float(np.mean(values)) if values else None

    def score(self) -> float | None:
        """What `solved` compares: the judge's score (train.solve_metric), else the mean return (or
        win) of the last solve_window episodes (None until that many ended)."""
        if self.judge is not None:
            return self.judge(self.steps)
        values = self.episode_stats.get(self.metric)
        return float(np.mean(values)) if values and len(values) >= self.window else None

    def solved(self, score: float | None) -> bool:
        """The score reaches the solved score."""
        if score is None:
            return False
        value = self.score()
        return value is not None and value >= score


# ---------------------------------------------------------------------------------------------
# Collect: one rollout of T steps per row


@dataclass
class Placement:
    """Where one recv's rows go. Each field is (src, dst) — the rows of the batch, and their (row,
    column) in storage — or None when no row goes there."""

    ids: np.ndarray  # the batch's rows
    col: np.ndarray  # each row's column: its new transition's (its outcome goes to col - 1)
    outcome: tuple | None  # rows whose transition in flight is in this rollout (0 < col <= T)
    store: tuple | None  # rows with room for a new transition (col < T)
    carry: tuple | None  # rows past the end (col >= T): their transition waits for the next rollout
    boot: tuple | None  # rows at col == T: this observation bootstraps their last column

    @classmethod
    def of(cls, run: Runner, env_ids: Any) -> Placement:
        steps = run.exp.values.shape[1]
        ids = np.asarray(env_ids, dtype=np.int64)
        if run.sync:  # every row, in order, all at one column: slices only
            c = int(run.ptr[0])
            rows, every = slice(None), slice(None)
            return cls(
                ids=ids,
                col=run.ptr,
                outcome=(every, (rows, c - 1)) if 0 < c <= steps else None,
                store=(every, (rows, c)) if c < steps else None,
                carry=(every, (rows, 0)) if c >= steps else None,
                boot=(every, (rows, 0)) if c == steps else None,
            )
        col = run.ptr[ids]
        zero = np.zeros_like(col)
        return cls(
            ids=ids,
            col=col,
            outcome=_where((col > 0) & (col <= steps), ids, col - 1),
            store=_where(col < steps, ids, col),
            carry=_where(col >= steps, ids, zero),
            boot=_where(col == steps, ids, zero),
        )


def collect(run: Runner) -> None:
    exp, carry = run.exp, run.carry
    steps = exp.values.shape[1]
    if run.ptr.min() > steps:  # after a previous rollout: its transitions in flight become column 0
        for name, value in carry.items():
            exp.put(name, (slice(None), 0), value)
        run.ptr[:] = 1
    while run.ptr.min() <= steps:  # a row is complete once its bootstrap observation has arrived
        obs, rewards, terminals, truncations, infos, env_ids, masks = run.vecenv.recv()
        masks = np.array(masks, dtype=bool)  # a copy: the buffer changes on send
        run.steps += int(masks.sum())
        if infos:
            run.record(infos)
        at = Placement.of(run, env_ids)
        if at.outcome is not None:  # 1. the outcome of each row's transition in flight
            src, dst = at.outcome
            outcome = run.actor.staging.stack([rewards, terminals, truncations])  # CUDA: one copy
            for name, value in zip(("rewards", "terminals", "truncations"), outcome, strict=True):
                exp.put(name, dst, value, src)
        step = run.actor(obs, terminals, truncations, at.ids, masks)  # 2. act on the new observations
        new = {  # 3. the new transitions, stored before send: obs views a buffer the next step overwrites
            "obs": step.obs,
            "actions": step.action,
            "logprobs": step.logprob,
            "values": step.value,
            "masks": masks,
            "valid": step.valid,
            "starts": step.starts,
        }
        _store(run, at, new, step.state)
        run.ptr[at.ids] = at.col + 1
        run.vecenv.send(step.action.cpu().numpy())  # Box actions: emulation clips them into the space


def _store(run: Runner, at: Placement, new: dict[str, Any], state: tuple | None) -> None:
    """The new transitions into their column, or (past the end) into the transitions in flight."""
    exp, carry = run.exp, run.carry
    if at.store is not None:
        src, dst = at.store
        for name, value in new.items():
            exp.put(name, dst, value, src)
        first = (at.col < exp.values.shape[1]) & (at.col % run.bptt == 0)  # an LSTM segment begins
        if state is not None and first.any():
            seg_src, seg_dst = _where(first, at.ids, at.col // run.bptt)
            exp.put("h0", seg_dst, state[0], seg_src)
            exp.put("c0", seg_dst, state[1], seg_src)
    if at.carry is not None:
        src, (rows, _) = at.carry
        for name, value in new.items():
            put(carry[name], rows, value, src)
        if state is not None:
            put(carry["h0"], rows, state[0], src)
            put(carry["c0"], rows, state[1], src)
    if at.boot is not None:
        src, (rows, _) = at.boot
        exp.put("next_values", rows, new["values"], src)
        exp.put("next_masks", rows, new["masks"], src)


def _where(select: np.ndarray, ids: np.ndarray, cols: np.ndarray) -> tuple | None:
    """(source index into the batch, destination (row, column) index) of the rows where `select`
    holds, or None if none does. Slices when the rows are one contiguous block at one column: far
    cheaper than fancy indexing."""
    if select.all():
        src: Any = slice(None)
    elif select.any():
        src = np.flatnonzero(select)
        ids, cols = ids[src], cols[src]
    else:
        return None
    if ids[-1] - ids[0] + 1 == len(ids) and (cols == cols[0]).all() and (np.diff(ids) == 1).all():
        return src, (slice(int(ids[0]), int(ids[-1]) + 1), int(cols[0]))
    return src, (ids, cols)
