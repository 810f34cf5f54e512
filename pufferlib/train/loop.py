"""The training loop: build the run (setup.py), then alternate collect / advantages / update
(ppo.py) until solved or out of steps or time, saving checkpoints on the way (checkpoint.py).

`learn` builds the envs, the policy and the optimizer, restores a checkpoint's state when it
resumes one (resume.py), and runs the loop (`_Training`). Every way the loop ends saves a final
checkpoint where it can: the budget or `solved`, Ctrl-C and the stop signals (signals.py), a lost
rank (distributed.py) and any other error (failure.py), which is raised as TrainingError once the
run is saved.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import pufferlib.environments as envs
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo import normalize, precision, versus
from pufferlib.train.ppo import optimizer as optimizers
from pufferlib.train.ppo.gae import advantages
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.ppo.update import update
from pufferlib.train.run import checkpoint, failure, resume, rundir, signals
from pufferlib.train.scale import distributed
from pufferlib.train.setup import (
    check_compile,
    check_config,
    make_policy,
    make_vecenv,
    resolve_device,
    solve_score,
    torch_settings,
)

Hook = Callable[[dict[str, Any]], None]  # called with the progress dict after every update


def learn(
    env_name: str,
    cfg: Config,
    hooks: Sequence[Hook] = (),
    *,
    resume_from: str | Path | None = None,
    prepare: Callable[[dict[str, Any] | None], Sequence[Hook]] | None = None,
    hold: signals.Hold | None = None,
) -> dict[str, Any]:
    """Train a policy on `env_name` with the resolved config `cfg`; returns the summary dict:
    env, steps, seconds, sps, mean_return, solved, solved_score, stop_reason (solved, steps, time,
    interrupted or error), signal (the signal that interrupted it, or None), episodes, updates,
    device, seed, checkpoint (the last one saved, or None).

    Every hook is called after every update with the progress dict (see `progress`): the live
    dashboard is one; experiment tracking and sweeps plug in the same way.

    resume_from: a checkpoint, or a run directory (its latest checkpoint): the run continues from
    its weights, optimizer, counters, statistics and RNG states. prepare(resumed): called once the
    envs, the policy and the optimizer are built (so a bad config or a missing backend leaves
    nothing behind), before the first rollout, with the resume state (None for a new run); it
    returns more hooks, called before `hooks` (train() makes the run directory and its tracking
    there). hold: the signals.Hold that keeps stop signals off the final save (train() releases it
    after summary.json; by default learn() does, before it returns). An error inside the loop is
    raised as failure.TrainingError once the run is saved.

    Under torchrun each rank runs this with its own envs (distributed.py): hooks and checkpoints
    on rank 0 only, steps, SPS and the budgets global.
    """
    start = time.perf_counter()
    tc = cfg["train"]
    binding = envs.get(env_name)
    check_config(cfg)
    solved_score = solve_score(binding, cfg)
    payload = _resume_payload(env_name, resume_from)
    own_hold = hold is None
    hold = hold or signals.Hold()
    try:
        with torch_settings(tc["torch_threads"]), distributed.join(tc["dist_timeout"]) as group:
            cfg = group.rank_config(cfg)  # seeds offset by rank: no two ranks share a trajectory
            tc = cfg["train"]
            hooks = list(hooks) if group.main else []
            device = _seed_and_device(tc, group)
            vecenv = make_vecenv(binding, cfg)
            judge = None
            try:
                policy, agent, optimizer, learner, run = _build(binding, vecenv, cfg, device, group)
                run.judge = judge = versus.judge(binding, cfg, agent, device, vecenv, solved_score)
                group.adopt(run)
                if payload is not None:
                    _load_weights(payload, policy, vecenv, device)
                if prepare is not None and group.main:
                    hooks = [*prepare(None if payload is None else payload["resume"]), *hooks]
                first = 0 if payload is None else int(payload["resume"]["update"])
                vecenv.async_reset(resume.reset_seed(tc["seed"], first))
                if payload is not None:  # last: building the run above draws from the RNGs
                    first, seconds = resume.restore(payload["resume"], run, optimizer)
                    start -= seconds
                args = (env_name, solved_score, cfg, run, policy, learner, optimizer, start, hooks, group)
                summary = _Training(*args, first, hold).train()
                summary = group.annotate(summary, policy)
                if payload is not None:
                    summary["resumed_from"] = payload["path"]
            finally:
                vecenv.close()
                if judge is not None:
                    judge.close()
    finally:
        if own_hold:
            hold.release()
    return summary


def _seed_and_device(tc: dict[str, Any], group: distributed.Solo) -> str:
    """Seed torch and numpy, and pick the device (checked for torch.compile when it is on, and for
    train.precision)."""
    torch.manual_seed(tc["seed"])
    np.random.seed(tc["seed"])
    device = resolve_device(tc["device"], group.local_rank)  # under torchrun: cuda:LOCAL_RANK
    if tc["compile"]:
        check_compile(device)
    precision.check(device, tc["precision"])
    return device


def _build(
    binding: Any, vecenv: Any, cfg: Config, device: str, group: distributed.Solo
) -> tuple[nn.Module, nn.Module, optimizers.Optimizer, nn.Module, Runner]:
    """The policy, the agent that acts and learns (the policy, or its torch.compile'd twin), the
    optimizer, the learner (the agent, or its DDP wrapper under torchrun) and the Runner."""
    tc = cfg["train"]
    policy = make_policy(binding, vecenv.driver_env, cfg, device).to(device)
    agent = policy
    if tc["compile"]:
        agent = type(policy)(torch.compile(policy.policy))  # shares parameters; save `policy`
        agent.mask_layout = policy.mask_layout
    optimizer = optimizers.build(policy, tc)  # train.optimizer: adam or muon
    learner = group.wrap(agent, device)  # DDP under torchrun: update() averages gradients
    run = Runner.create(vecenv, agent, cfg, device)
    return policy, agent, optimizer, learner, run


def _resume_payload(env_name: str, resume_from: str | Path | None) -> dict[str, Any] | None:
    """The checkpoint to resume from (a file, or a run directory's latest), checked before anything
    is built."""
    if resume_from is None:
        return None
    path = Path(resume_from)
    if path.is_dir():
        _, _, found = resume.locate(path, env_name, None)
        if found is None:  # the run saved no checkpoint: it starts again
            return None
        path = found
    payload = checkpoint.load(path)
    if payload["env"] != env_name:
        raise resume.ResumeError(f"{path} was trained on {payload['env']}, not {env_name}")
    if "resume" not in payload:
        raise resume.ResumeError(f"{path} holds the weights only (an older checkpoint): it cannot be resumed")
    payload["path"] = str(path)
    return payload


def _load_weights(payload: dict[str, Any], policy: nn.Module, vecenv: Any, device: str) -> None:
    try:
        policy.load_state_dict({k: v.to(device) for k, v in payload["state_dict"].items()})
    except RuntimeError as e:
        raise ConfigError(
            f"{payload['path']}: the weights do not fit the policy the config builds (an override of "
            f"[policy] or [rnn]?): {str(e).splitlines()[0]}"
        ) from None
    if isinstance(vecenv, normalize.VecNormalize):
        vecenv.load_state_dict(payload.get("normalize") or {})


class _Training:
    """The training loop: alternate collect / advantages / update until solved, or out of steps or
    time (train(): updates(), then finish(), the final save and the summary). `agent` is `policy`,
    or its torch.compile'd twin sharing the same parameters (checkpoints save `policy`).
    Ctrl-C (or a signal that `signals.stop_on` turns into an interruption) stops the loop; the
    policy is still saved and the summary returned. Under torchrun, `group` syncs the ranks
    after every rollout; a lost rank stops the loop (rank 0 saves) and is raised as RankLost.
    Any other error stops it too: saved where possible, then raised as failure.TrainingError.
    The attributes are what the steps share: the counters, the last checkpoint, how the run stopped."""

    def __init__(
        self,
        env_name: str,
        solved_score: float | None,
        cfg: Config,
        run: Runner,
        policy: nn.Module,
        agent: nn.Module,
        optimizer: optimizers.Optimizer,
        start: float,
        hooks: Sequence[Hook],
        group: distributed.Solo | None,
        first_update: int,
        hold: signals.Hold | None,
    ) -> None:
        self.env_name, self.solved_score, self.cfg, self.tc = env_name, solved_score, cfg, cfg["train"]
        self.run, self.policy, self.agent, self.optimizer = run, policy, agent, optimizer
        self.start, self.hooks = start, hooks
        self.group = group or distributed.Solo()
        self.hold = hold or signals.Hold()
        self.run_dir = rundir.path(self.tc["run_dir"], env_name) if self.group.main else None
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)  # train() made it; learn() alone may not have
        self.saver = checkpoint.Saver(self.run_dir, cfg) if self.run_dir else None
        self.saved = self.saver.history[-1] if self.saver and self.saver.history else None
        self.lost: distributed.RankLost | None = None
        self.error: BaseException | None = None
        self.message: str | None = None
        self.reason, self.signal_name, self.update_index = "steps", None, first_update
        self.losses: dict[str, float] = {}
        self.collecting = False  # inside an update's rollout: stopped there, the update never happened
        self.steps_done = run.steps  # agent steps at the end of the last finished update

    def train(self) -> dict[str, Any]:
        self.updates()
        return self.finish()

    def updates(self) -> None:
        """Update until solved or out of steps or time, or until something stops the run: how it
        stopped is left in reason, signal_name, lost, error and message."""
        try:
            while not self.out_of_budget() and not self.one_update():
                pass
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP under signals.stop_on: save, report
            self.hold.start()  # first: a second Ctrl-C must wait for the save
            self.reason, self.signal_name = "interrupted", getattr(stop, "signal_name", None)
            self.unfinished()
        except distributed.RankLost as lost_rank:  # another rank is gone: save what this one has, then raise
            self.hold.start()
            self.lost = lost_rank
        except Exception as e:  # a worker died, the disk filled, the run directory went, a NaN loss
            self.hold.start()
            self.reason, self.error = "error", e
            self.message = failure.describe(e, self.update_index, self.run_dir)
            self.unfinished()

    def unfinished(self) -> None:
        """Stopped inside a rollout: that update never happened. The final save is then numbered
        for the last finished update and holds its steps, so metrics.jsonl and the checkpoints agree
        and a resume continues with the next number (the rollout's steps are dropped: a resumed run
        resets its envs)."""
        if self.collecting:
            self.collecting = False
            self.update_index -= 1
            self.run.steps = self.steps_done

    def out_of_budget(self) -> bool:
        """Out of steps, or of time (reason "time")."""
        if self.run.steps >= self.tc["total_timesteps"]:
            return True
        if self.tc["max_seconds"] and self.group.elapsed(self.start) >= self.tc["max_seconds"]:
            self.reason = "time"
            return True
        return False

    def one_update(self) -> bool:
        """Collect, then (unless solved and stopping) advantages and update, a checkpoint when one
        is due, then the hooks. True when the run is solved and stops."""
        tc, run, optimizer = self.tc, self.run, self.optimizer
        self.update_index += 1
        if tc["anneal_lr"]:
            optimizers.set_learning_rates(optimizer, tc, max(0.0, 1.0 - run.steps / tc["total_timesteps"]))
        t0, s0 = time.perf_counter(), run.steps
        self.collecting = True
        collect(run)
        self.group.sync(run, self.start)
        self.collecting = False
        with signals.Defer():  # a stop signal waits for the update, its checkpoint and its metrics
            solved = run.solved(self.solved_score)
            if solved and tc["stop_when_solved"]:
                self.reason = "solved"
            else:
                adv, returns = advantages(run.exp, tc["gamma"], tc["gae_lambda"], run.resets_on_send)
                with self.group.watch():
                    self.losses = update(self.agent, optimizer, run.exp, adv, returns, tc, run.recurrent)
                failure.check_losses(self.update_index, self.losses)
            self.steps_done = run.steps
            if self.saver is not None and self.saver.due(self.update_index):
                self.save()
            if self.hooks:
                self.call_hooks(solved, (run.steps - s0) / max(time.perf_counter() - t0, 1e-9))
        return self.reason == "solved"

    def call_hooks(self, solved: bool, sps: float) -> None:
        info = progress(
            self.env_name,
            self.cfg,
            self.run,
            self.update_index,
            self.start,
            sps,
            self.solved_score,
            solved,
            self.losses,
        )
        info["learning_rate"] = self.optimizer.param_groups[0]["lr"]
        info["policy"], info["vecenv"] = self.policy, self.run.vecenv  # train.video_interval plays the policy
        for hook in self.hooks:
            hook(info)

    def save(self) -> Path:
        run = self.run
        mean_return = run.window_mean("episode_return")
        elapsed = time.perf_counter() - self.start
        state = resume.snapshot(run, self.optimizer, self.update_index, elapsed, self.tc["seed"])
        self.saved = checkpoint.save(
            self.run_dir,
            self.env_name,
            self.cfg,
            self.policy,
            run.steps,
            self.update_index,
            mean_return,
            normalize.state(run.vecenv),
            state,
        )
        self.saver.saved(self.saved, mean_return)
        return self.saved

    def finish(self) -> dict[str, Any]:
        """The final save (not after a non-finite loss: those weights are not worth keeping), then
        the summary; a lost rank is raised as RankLost, an error as failure.TrainingError."""
        self.hold.start()
        seconds = time.perf_counter() - self.start
        mean_return = self.run.window_mean("episode_return")
        if self.saver is not None and not isinstance(self.error, failure.NonFiniteLoss):
            self.final_save()
        if self.run_dir is not None and not self.run_dir.is_dir():  # deleted: its checkpoints are gone too
            self.saved = None
        if self.lost is not None:
            self.lost.checkpoint = None if self.saved is None else str(self.saved)
            raise self.lost
        summary = self.summary(seconds, mean_return)
        if self.message is not None:
            summary["error"] = self.message
            raise failure.TrainingError(self.message, summary) from self.error
        return summary

    def final_save(self) -> None:
        """save(); a save that fails is the run's error, or adds to the one it already has."""
        try:
            self.save()
        except checkpoint.CheckpointSaveError as e:
            if self.message is None:
                self.reason, self.error, self.message = "error", e, str(e)
            elif self.run_dir.is_dir() and not isinstance(self.error, checkpoint.CheckpointSaveError):
                self.message += f"; {e}"

    def summary(self, seconds: float, mean_return: float | None) -> dict[str, Any]:
        run, tc = self.run, self.tc
        return {
            "env": self.env_name,
            "steps": run.steps,
            "seconds": round(seconds, 3),
            "sps": round(run.steps / seconds, 1),
            "mean_return": None if mean_return is None else round(mean_return, 4),
            "solved": run.solved(self.solved_score),
            "solved_score": self.solved_score,
            "solve_metric": tc["solve_metric"],
            "score": _round(run.score()),
            "stop_reason": self.reason,
            "signal": self.signal_name,
            "episodes": run.episodes,
            "updates": self.update_index,
            "device": run.device,
            "seed": tc["seed"],
            "checkpoint": None if self.saved is None else str(self.saved),
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
