"""PPO (Schulman et al. 2017) as in CleanRL's ppo.py, over PufferLib vector envs.

Read top to bottom: the rollout storage, then `collect` (a rollout into preallocated tensors,
acting through act.Actor), `advantages` (GAE), `update` (clipped PPO epochs over minibatches) and
`learn`, the loop that alternates them. The envs, the policy and the device come from setup.py;
checkpoints are saved through checkpoint.py into the run directory (rundir.py); per-update metrics
go to hooks (the dashboard, tracking.py).

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
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import gymnasium
import numpy as np
import torch
from torch import nn

import pufferlib.environments as envs
from pufferlib.pytorch import torch_dtype
from pufferlib.train import checkpoint, distributed, memory, normalize, rundir, versus
from pufferlib.train.act import Actor
from pufferlib.train.config import Config
from pufferlib.train.setup import (
    check_compile,
    check_config,
    make_policy,
    make_vecenv,
    resolve_device,
    solve_score,
    torch_settings,
)


def action_spec(space: gymnasium.Space) -> tuple[tuple[int, ...], torch.dtype]:
    """Per-row shape and dtype of the actions sample_logits returns for a flat action space."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return (), torch.int64
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return (int(np.prod(space.shape)),), torch.int64
    return tuple(space.shape), torch.float32


# ---------------------------------------------------------------------------------------------
# Rollout storage


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

    def __post_init__(self) -> None:
        # On the CPU, numpy views of the same memory: writing one column of a few rows through numpy
        # costs a fraction of torch's indexing (see `put`).
        self.host = None
        if self.values.device.type == "cpu":
            self.host = {
                f.name: getattr(self, f.name).numpy()
                for f in fields(self)
                if getattr(self, f.name) is not None
            }

    def put(self, name: str, index: Any, value: Any) -> None:
        """storage[name][index] = value (a tensor or a numpy array)."""
        if self.host is not None:
            self.host[name][index] = value.numpy() if isinstance(value, torch.Tensor) else value
        else:
            store = getattr(self, name)
            store[index] = (
                value if isinstance(value, torch.Tensor) else torch.from_numpy(np.asarray(value)).to(store)
            )

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
    sync: bool  # every recv returns every row, in order (batch_size == num_envs): see _collect_sync
    steps: int = 0
    episodes: int = 0
    judge: Callable[[int], float] | None = None  # steps -> score; None: the window's mean return (versus.py)
    deferred: list[dict] | None = None  # distributed: episodes held for the sync (distributed.py)

    @classmethod
    def create(cls, vecenv: Any, agent: nn.Module, cfg: Config, device: str) -> Runner:
        """Storage and per-row state for `vecenv`; `agent` is a cleanrl Policy or RecurrentPolicy."""
        tc = cfg["train"]
        rows = int(vecenv.num_agents)
        actor = Actor(vecenv, agent, device)
        bptt = tc["bptt_horizon"] if actor.recurrent else 1
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
            self.deferred.extend(info for info in infos if "episode_return" in info)
            return
        for info in infos:
            if "episode_return" not in info:
                continue
            # A native env reports the means of `n` episodes in one info: it counts n times.
            n = info.get("n", 1)
            n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1
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
        """What `solved` compares: the judge's score (train.solve_metric), else the mean return of
        the last solve_window episodes (None until that many ended)."""
        if self.judge is not None:
            return self.judge(self.steps)
        values = self.episode_stats.get("episode_return")
        return float(np.mean(values)) if values and len(values) >= self.window else None

    def solved(self, score: float | None) -> bool:
        """The score reaches the solved score."""
        if score is None:
            return False
        value = self.score()
        return value is not None and value >= score


# ---------------------------------------------------------------------------------------------
# Collect: one rollout of T steps per row


def collect(run: Runner) -> None:
    if run.sync:
        return _collect_sync(run)
    exp, carry, device = run.exp, run.carry, run.device
    steps = exp.values.shape[1]
    if run.ptr.min() > steps:  # after a previous rollout: its transitions in flight become column 0
        for name, value in carry.items():
            getattr(exp, name)[:, 0] = value
        run.ptr[:] = 1
    while run.ptr.min() <= steps:  # a row is complete once its bootstrap observation has arrived
        obs, rewards, terminals, truncations, infos, env_ids, masks = run.vecenv.recv()
        ids = np.asarray(env_ids, dtype=np.int64)
        col = run.ptr[ids]
        masks = np.array(masks, dtype=bool)  # a copy: the buffer changes on send
        run.steps += int(masks.sum())
        run.record(infos)

        # 1. The outcome of each row's transition in flight (dropped for rows already complete).
        src, dst = _where((col > 0) & (col <= steps), ids, col - 1, device)
        if dst is not None:
            for name, value in (("rewards", rewards), ("terminals", terminals), ("truncations", truncations)):
                getattr(exp, name)[dst] = torch.from_numpy(np.asarray(value))[src].to(device, torch.float32)

        # 2. Act on the new observations.
        step = run.actor(obs, terminals, truncations, ids, masks)

        # 3. Store the new transitions (in their column, or as the transitions in flight) before
        # send: obs is a view of a buffer that the next step overwrites.
        fields = {
            "obs": step.obs,
            "actions": step.action,
            "logprobs": step.logprob,
            "values": step.value,
            "masks": torch.from_numpy(masks).to(device, torch.float32),
            "valid": torch.from_numpy(step.valid).to(device),
            "starts": step.starts,
        }
        state = step.state
        src, dst = _where(col < steps, ids, col, device)
        if dst is not None:
            for name, value in fields.items():
                getattr(exp, name)[dst] = value[src]
            first = (col < steps) & (col % run.bptt == 0)  # the LSTM state that begins a segment
            if state is not None and first.any():
                seg_src, seg_dst = _where(first, ids, col // run.bptt, device)
                exp.h0[seg_dst], exp.c0[seg_dst] = state[0][seg_src], state[1][seg_src]
        src, dst = _where(col >= steps, ids, np.zeros_like(col), device)
        if dst is not None:
            rows = dst[0]
            for name, value in fields.items():
                carry[name][rows] = value[src]
            if state is not None:
                carry["h0"][rows], carry["c0"][rows] = state[0][src], state[1][src]
            boot_src, boot_dst = _where(col == steps, ids, np.zeros_like(col), device)
            if boot_dst is not None:
                exp.next_values[boot_dst[0]] = fields["values"][boot_src]
                exp.next_masks[boot_dst[0]] = fields["masks"][boot_src]
        run.ptr[ids] = col + 1
        run.vecenv.send(step.action.cpu().numpy())  # Box actions: emulation clips them into the space


def _collect_sync(run: Runner) -> None:
    """collect() when every recv returns every row in order: all rows are at one column `c`, so
    each value is stored with one slice, and on the CPU through numpy (Experience.put)."""
    exp, carry = run.exp, run.carry
    steps = exp.values.shape[1]
    c = int(run.ptr[0])
    if c > steps:  # after a previous rollout: its transitions in flight become column 0
        for name, value in carry.items():
            exp.put(name, (slice(None), 0), value)
        c = 1
    while c <= steps:
        obs, rewards, terminals, truncations, infos, ids, masks = run.vecenv.recv()
        masks = masks.copy()  # the buffer changes on send
        run.steps += int(masks.sum())
        if infos:
            run.record(infos)
        if c > 0:  # the outcome of the transitions in flight
            exp.put("rewards", (slice(None), c - 1), rewards)
            exp.put("terminals", (slice(None), c - 1), terminals)
            exp.put("truncations", (slice(None), c - 1), truncations)
        step = run.actor(obs, terminals, truncations, ids, masks)
        new = {
            "obs": obs,  # stored before send, which overwrites the buffer it views
            "actions": step.action,
            "logprobs": step.logprob,
            "values": step.value,
            "masks": masks,
            "valid": step.valid,
            "starts": step.starts,
        }
        if c < steps:
            for name, value in new.items():
                exp.put(name, (slice(None), c), value)
            if step.state is not None and c % run.bptt == 0:  # the LSTM state that begins a segment
                exp.put("h0", (slice(None), c // run.bptt), step.state[0])
                exp.put("c0", (slice(None), c // run.bptt), step.state[1])
        else:  # the bootstrap observation: its transition is in flight until the next rollout
            for name, value in new.items():
                carry[name][:] = torch.as_tensor(value).to(carry[name])
            if step.state is not None:
                carry["h0"][:], carry["c0"][:] = step.state
            exp.next_values[:] = step.value
            exp.next_masks[:] = torch.from_numpy(masks).to(exp.next_masks)
        c += 1
        run.vecenv.send(step.action.cpu().numpy())  # Box actions: emulation clips them into the space
    run.ptr[:] = c


def _where(select: np.ndarray, ids: np.ndarray, cols: np.ndarray, device: str):
    """(source index into the batch, destination (row, column) index) of the rows where `select`
    holds, or (None, None) if none does. Uses slices when the rows are one contiguous block at one
    column, which is every synchronous or Serial batch: far cheaper than fancy indexing."""
    if select.all():
        src: Any = slice(None)
    elif select.any():
        keep = np.flatnonzero(select)
        src, ids, cols = torch.from_numpy(keep).to(device), ids[keep], cols[keep]
    else:
        return None, None
    if ids[-1] - ids[0] + 1 == len(ids) and (cols == cols[0]).all() and (np.diff(ids) == 1).all():
        return src, (slice(int(ids[0]), int(ids[-1]) + 1), int(cols[0]))
    return src, (torch.from_numpy(ids).to(device), torch.from_numpy(cols).to(device))


# ---------------------------------------------------------------------------------------------
# Advantages: GAE over each row


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


# ---------------------------------------------------------------------------------------------
# Update: clipped PPO epochs over minibatches


def update(
    agent: nn.Module,
    optimizer: torch.optim.Optimizer,
    exp: Experience,
    adv: torch.Tensor,
    returns: torch.Tensor,
    tc: dict[str, Any],
    recurrent: bool,
) -> dict[str, float]:
    rows, steps = exp.values.shape
    if recurrent:  # minibatches of BPTT segments; invalid rows inside them weigh 0
        bptt = tc["bptt_horizon"]
        segs = rows * (steps // bptt)

        def view(x: torch.Tensor) -> torch.Tensor:
            return x.reshape(segs, bptt, *x.shape[2:])

        data = {
            "obs": view(exp.obs),
            "actions": view(exp.actions),
            "logprobs": view(exp.logprobs),
            "values": view(exp.values),
            "adv": view(adv),
            "returns": view(returns),
            "weights": view(exp.valid).float(),
            "starts": view(exp.starts),
            "h0": exp.h0.reshape(segs, -1),
            "c0": exp.c0.reshape(segs, -1),
        }
        keep = data["weights"].sum(1) > 0
    else:  # minibatches of valid rows only
        keep = exp.valid.reshape(-1)
        flat = {
            "obs": exp.obs,
            "actions": exp.actions,
            "logprobs": exp.logprobs,
            "values": exp.values,
            "adv": adv,
            "returns": returns,
        }
        data = {name: x.reshape(rows * steps, *x.shape[2:]) for name, x in flat.items()}
    data = {name: x[keep] for name, x in data.items()}
    total = int(keep.sum())
    if total == 0:
        return {}
    minibatch = max(1, total // tc["num_minibatches"])

    stats: dict[str, list[torch.Tensor]] = collections.defaultdict(list)
    params = [p for p in agent.parameters() if p.requires_grad]
    for _epoch in range(tc["update_epochs"]):
        order = torch.randperm(total, device=exp.values.device)
        for start in range(0, total - minibatch + 1, minibatch):
            mb = {name: x[order[start : start + minibatch]] for name, x in data.items()}
            if recurrent:
                weights = mb["weights"].reshape(-1)
                _, newlogprob, entropy, newvalue, _ = agent.get_action_and_value(
                    mb["obs"],
                    (mb["h0"], mb["c0"]),
                    action=mb["actions"].reshape(-1, *mb["actions"].shape[2:]),
                    starts=mb["starts"],
                )
            else:
                weights = None
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(mb["obs"], mb["actions"])
            old_logprob, old_value = mb["logprobs"].reshape(-1), mb["values"].reshape(-1)
            mb_adv, mb_returns = mb["adv"].reshape(-1), mb["returns"].reshape(-1)
            newvalue = newvalue.reshape(-1)

            logratio = newlogprob - old_logprob
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = _mean((ratio - 1) - logratio, weights)
                clipfrac = _mean(((ratio - 1).abs() > tc["clip_coef"]).float(), weights)
            if tc["norm_adv"]:
                mean = _mean(mb_adv, weights)
                std = _mean((mb_adv - mean) ** 2, weights).sqrt()
                mb_adv = (mb_adv - mean) / (std + 1e-8)

            pg_loss = _mean(
                torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - tc["clip_coef"], 1 + tc["clip_coef"])),
                weights,
            )
            if tc["clip_vloss"]:
                clipped = old_value + (newvalue - old_value).clamp(-tc["clip_coef"], tc["clip_coef"])
                v_loss = 0.5 * _mean(
                    torch.max((newvalue - mb_returns) ** 2, (clipped - mb_returns) ** 2), weights
                )
            else:
                v_loss = 0.5 * _mean((newvalue - mb_returns) ** 2, weights)
            entropy_loss = _mean(entropy, weights)
            loss = pg_loss - tc["ent_coef"] * entropy_loss + tc["vf_coef"] * v_loss

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            clip_grad_norm(params, tc["max_grad_norm"])
            optimizer.step()

            for name, value in (
                ("policy_loss", pg_loss),
                ("value_loss", v_loss),
                ("entropy", entropy_loss),
                ("approx_kl", approx_kl),
                ("clipfrac", clipfrac),
            ):
                stats[name].append(value.detach())  # read once after the epochs: no sync per minibatch
        if tc["target_kl"] and distributed.agreed_mean(stats["approx_kl"][-1].item()) > tc["target_kl"]:
            break

    valid = exp.valid
    y_pred, y_true = exp.values[valid], returns[valid]
    var = y_true.var() if y_true.numel() > 1 else torch.tensor(0.0)
    explained = float("nan") if var == 0 else float(1 - (y_true - y_pred).var() / var)
    out = {name: float(torch.stack(values).mean()) for name, values in stats.items()}
    out["explained_variance"] = explained
    return out


def clip_grad_norm(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ (the same scaling of the same global L2 norm) in three tensor
    ops, which for a small policy on the CPU costs a third of torch's version."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(())
    norm = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads]))
    torch._foreach_mul_(grads, (max_norm / (norm + 1e-6)).clamp(max=1.0))
    return norm


def _mean(x: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    if weights is None:
        return x.mean()
    return (x * weights).sum() / weights.sum().clamp(min=1)


# ---------------------------------------------------------------------------------------------
# The training loop

Hook = Callable[[dict[str, Any]], None]  # called with the progress dict after every update


def learn(env_name: str, cfg: Config, hooks: Sequence[Hook] = ()) -> dict[str, Any]:
    """Train a policy on `env_name` with the resolved config `cfg`; returns the summary dict:
    env, steps, seconds, sps, mean_return, solved, solved_score, stop_reason (solved, steps, time
    or interrupted), signal (the signal that interrupted it, or None), episodes, updates, device,
    seed, checkpoint (the last one saved, or None).

    Every hook is called after every update with the progress dict (see `progress`): the live
    dashboard is one; experiment tracking and sweeps plug in the same way.

    Under torchrun each rank runs this with its own envs (distributed.py): hooks and checkpoints
    on rank 0 only, steps, SPS and the budgets global.
    """
    start = time.perf_counter()
    tc = cfg["train"]
    binding = envs.get(env_name)
    check_config(cfg)
    solved_score = solve_score(binding, cfg)
    with torch_settings(tc["torch_threads"]), distributed.join(tc["dist_timeout"]) as group:
        cfg = group.rank_config(cfg)  # seeds offset by rank: no two ranks share a trajectory
        tc = cfg["train"]
        hooks = hooks if group.main else ()
        torch.manual_seed(tc["seed"])
        np.random.seed(tc["seed"])
        device = resolve_device(tc["device"], group.local_rank)  # under torchrun: cuda:LOCAL_RANK
        if tc["compile"]:
            check_compile(device)
        vecenv = make_vecenv(binding, cfg)
        judge = None
        try:
            policy = make_policy(binding, vecenv.driver_env, cfg).to(device)
            agent = policy
            if tc["compile"]:
                agent = type(policy)(torch.compile(policy.policy))  # shares parameters; save `policy`
                agent.mask_layout = policy.mask_layout
            # fused: one kernel for all parameters, 4x faster than the per-tensor loop on CPU
            optimizer = torch.optim.Adam(policy.parameters(), lr=tc["learning_rate"], eps=1e-5, fused=True)
            learner = group.wrap(agent, device)  # DDP under torchrun: update() averages gradients
            run = Runner.create(vecenv, agent, cfg, device)
            run.judge = judge = versus.judge(binding, cfg, agent, device, vecenv, solved_score)
            group.adopt(run)
            vecenv.async_reset(tc["seed"])
            summary = _loop(env_name, solved_score, cfg, run, policy, learner, optimizer, start, hooks, group)
            summary = group.annotate(summary, policy)
        finally:
            vecenv.close()
            if judge is not None:
                judge.close()
    return summary


def _loop(
    env_name: str,
    solved_score: float | None,
    cfg: Config,
    run: Runner,
    policy: nn.Module,
    agent: nn.Module,
    optimizer: torch.optim.Optimizer,
    start: float,
    hooks: Sequence[Hook],
    group: distributed.Solo | None = None,
) -> dict[str, Any]:
    """Alternate collect / advantages / update until solved, or out of steps or time. `agent` is
    `policy`, or its torch.compile'd twin sharing the same parameters (checkpoints save `policy`).
    Ctrl-C (or a signal that `signals.stop_on` turns into an interruption) stops the loop; the
    policy is still saved and the summary returned. Under torchrun, `group` syncs the ranks
    after every rollout; a lost rank stops the loop (rank 0 saves) and is raised as RankLost."""
    tc = cfg["train"]
    group = group or distributed.Solo()
    run_dir = rundir.path(tc["run_dir"], env_name) if group.main else None
    saved, lost = None, None
    reason, signal_name, update_index, losses = "steps", None, 0, {}
    try:
        while True:
            if run.steps >= tc["total_timesteps"]:
                break
            if tc["max_seconds"] and group.elapsed(start) >= tc["max_seconds"]:
                reason = "time"
                break
            update_index += 1
            if tc["anneal_lr"]:
                frac = max(0.0, 1.0 - run.steps / tc["total_timesteps"])
                optimizer.param_groups[0]["lr"] = frac * tc["learning_rate"]
            t0, s0 = time.perf_counter(), run.steps
            collect(run)
            group.sync(run, start)
            solved = run.solved(solved_score)
            if solved and tc["stop_when_solved"]:
                reason = "solved"
            else:
                adv, returns = advantages(run.exp, tc["gamma"], tc["gae_lambda"], run.resets_on_send)
                with group.watch():
                    losses = update(agent, optimizer, run.exp, adv, returns, tc, run.recurrent)
            if run_dir and tc["checkpoint_interval"] and update_index % tc["checkpoint_interval"] == 0:
                saved = checkpoint.save(
                    run_dir,
                    env_name,
                    cfg,
                    policy,
                    run.steps,
                    update_index,
                    run.window_mean("episode_return"),
                    normalize.state(run.vecenv),
                )
            if hooks:
                sps = (run.steps - s0) / max(time.perf_counter() - t0, 1e-9)
                info = progress(env_name, cfg, run, update_index, start, sps, solved_score, solved, losses)
                info["learning_rate"] = optimizer.param_groups[0]["lr"]
                for hook in hooks:
                    hook(info)
            if reason == "solved":
                break
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP under signals.stop_on: save, report
        reason, signal_name = "interrupted", getattr(stop, "signal_name", None)
    except distributed.RankLost as error:  # another rank is gone: save what this one has, then raise
        lost = error
    seconds = time.perf_counter() - start
    mean_return = run.window_mean("episode_return")
    if run_dir:
        saved = checkpoint.save(
            run_dir, env_name, cfg, policy, run.steps, update_index, mean_return, normalize.state(run.vecenv)
        )
    if lost is not None:
        lost.checkpoint = None if saved is None else str(saved)
        raise lost
    return {
        "env": env_name,
        "steps": run.steps,
        "seconds": round(seconds, 3),
        "sps": round(run.steps / seconds, 1),
        "mean_return": None if mean_return is None else round(mean_return, 4),
        "solved": run.solved(solved_score),
        "solved_score": solved_score,
        "solve_metric": tc["solve_metric"],
        "score": _round(run.score()),
        "stop_reason": reason,
        "signal": signal_name,
        "episodes": run.episodes,
        "updates": update_index,
        "device": run.device,
        "seed": tc["seed"],
        "checkpoint": None if saved is None else str(saved),
    }


def progress(
    env_name: str,
    cfg: Config,
    run: Runner,
    update_index: int,
    start: float,
    sps: float,
    solved_score: float | None,
    solved: bool,
    losses: dict[str, float],
) -> dict[str, Any]:
    """The per-update metrics every hook receives (one place: add a metric here and every hook has it)."""
    tc = cfg["train"]
    return {
        "env": env_name,
        "update": update_index,
        "steps": run.steps,
        "total_timesteps": tc["total_timesteps"],
        "elapsed": time.perf_counter() - start,
        "max_seconds": tc["max_seconds"],
        "sps": sps,
        "episodes": run.episodes,
        "mean_return": run.window_mean("episode_return"),
        "mean_length": run.window_mean("episode_length"),
        "solved_score": solved_score,
        "solved": solved,
        "score": run.score(),
        "solve_metric": tc["solve_metric"],
        "losses": losses,
        "env_stats": {
            key: run.window_mean(key)
            for key in run.episode_stats
            if key not in ("episode_return", "episode_length")
        },
        "device": run.device,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
