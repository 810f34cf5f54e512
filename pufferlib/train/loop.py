"""The training loop: build the run (setup.py), then alternate collect / advantages / update
(ppo/) until solved or out of steps or time, saving checkpoints on the way (run/checkpoint.py).

`learn` trains what a RunSpec (spec.py) says, resolving nothing again: it builds the envs, the
policy and the optimizer, restores the spec's checkpoint when it resumes one (run/resume.py),
opens the run directory and its tracking once all that is built (so a bad config or a missing
backend leaves nothing behind), and runs the loop (`_Training`). Every way the loop ends saves a
final checkpoint where it can: the budget or `solved`, Ctrl-C and the stop signals (signals.py), a
lost rank (distributed.py) and any other error (failure.py), which is raised as TrainingError once
the run is saved.

One network, three forms (`_build`'s `Network`): `policy` (its weights: what checkpoints save and hooks
play), `compiled` (the policy, or its torch.compile'd twin sharing the same parameters: what acts
in rollouts and the judge) and `replicated` (compiled, or its DDP wrapper under torchrun: what
update() trains).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

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
from pufferlib.train.run import checkpoint, failure, resume, rundir, signals, tracking
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
from pufferlib.train.spec import RunSpec

Hook = Callable[[dict[str, Any]], None]  # called with the progress dict after every update


def learn(spec: RunSpec, hooks: Sequence[Hook] = ()) -> dict[str, Any]:
    """Train the run `spec` describes; returns the summary dict: env, steps, seconds, sps,
    mean_return, solved, solved_score, stop_reason (solved, steps, time, interrupted or error),
    signal (the signal that interrupted it, or None), episodes, updates, device, seed, checkpoint
    (the last one saved, or None), run_dir (None without one), resumed_from (a resume's checkpoint).

    Every hook is called after every update with the progress dict (see `progress`), after the
    run's own tracking (metrics.jsonl, TensorBoard, W&B, Neptune): the live dashboard is one;
    sweeps plug in the same way. The run directory's summary.json is written, and stop signals
    are held off the final save, until learn() returns. An error inside the loop is raised as
    failure.TrainingError once the run is saved.

    Under torchrun each rank runs this with its own envs (distributed.py): the run directory,
    tracking, hooks and checkpoints on rank 0 only, steps, SPS and the budgets global.
    """
    start = time.perf_counter()
    main = distributed.is_main()
    run_dir = spec.run_dir if main else None  # rank 0 alone writes the run directory and tracks
    _check(spec, run_dir, main)
    binding = envs.get(spec.env_name)
    check_config(spec.cfg)
    solved_score = solve_score(binding, spec.cfg)
    hold = signals.Hold()  # released after summary.json: a stop signal then ends the run at once
    opened = _Opened(spec, run_dir)
    summary: dict[str, Any] | None = None
    try:
        with (
            torch_settings(spec.cfg["train"]["torch_threads"]),
            distributed.join(spec.cfg["train"]["dist_timeout"]) as group,
        ):
            cfg = group.rank_config(spec.cfg)  # seeds offset by rank: no two ranks share a trajectory
            tc = cfg["train"]
            device = _seed_and_device(tc, group)
            vecenv = make_vecenv(binding, cfg)
            judge = None
            try:
                net, run = _build(binding, vecenv, cfg, device, group)
                run.judge = judge = versus.judge(binding, cfg, net.compiled, device, vecenv, solved_score)
                group.adopt(run)
                if spec.checkpoint is not None:
                    _load_weights(spec.checkpoint, net.policy, vecenv, device)
                hooks = [opened.open(), *hooks] if group.main else []
                first = 0 if spec.resumed is None else int(spec.resumed["update"])
                vecenv.async_reset(resume.reset_seed(tc["seed"], first))
                if spec.resumed is not None:  # last: building the run above draws from the RNGs
                    first, seconds = resume.restore(spec.resumed, run, net.optimizer)
                    start -= seconds
                training = _Training(
                    spec=spec,
                    cfg=cfg,
                    run=run,
                    net=net,
                    group=group,
                    hooks=hooks,
                    hold=hold,
                    solved_score=solved_score,
                    start=start,
                    run_dir=run_dir,
                    update_index=first,
                )
                try:
                    summary = training.train()
                except failure.TrainingError as e:
                    summary = e.summary
                    raise
                summary = group.annotate(summary, net.policy)
                if spec.checkpoint is not None:
                    summary["resumed_from"] = spec.checkpoint["path"]
            finally:
                vecenv.close()
                if judge is not None:
                    judge.close()
                # DDP's reducer holds the process group: let it go while the group is still joined,
                # so leaving it (destroy_process_group) tears gloo down with nothing left pending
                net = training = None
    finally:
        try:
            if summary is not None:
                summary["run_dir"] = None if run_dir is None else str(run_dir)
            opened.close(summary)
        finally:
            hold.release()  # a stop signal that came during the final save ends the run now
    return summary


def _check(spec: RunSpec, run_dir: Path | None, main: bool) -> None:
    """What the spec asks of this process, refused before anything is built: a resume off rank 0,
    a new run's directory that holds a run, a tracking backend whose package is missing."""
    if spec.resuming and not main:
        raise ConfigError("resuming a distributed (torchrun) run is not supported yet")
    if run_dir is not None and not spec.resuming:
        rundir.check(run_dir)
    if main:
        tracking.require(spec.cfg, run_dir is not None)


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


class Network(NamedTuple):
    """One network's three forms (see the module's docstring) and the optimizer of its parameters."""

    policy: nn.Module  # its weights: saved, and played by train.video_interval
    compiled: nn.Module  # acts in rollouts and the judge
    replicated: nn.Module  # what update() trains
    optimizer: optimizers.Optimizer


def _build(
    binding: Any, vecenv: Any, cfg: Config, device: str, group: distributed.Solo
) -> tuple[Network, Runner]:
    """The network (with its optimizer) and the Runner."""
    tc = cfg["train"]
    policy = make_policy(binding, vecenv.driver_env, cfg, device).to(device)
    compiled = policy
    if tc["compile"]:
        compiled = type(policy)(torch.compile(policy.policy))  # shares parameters; save `policy`
        compiled.mask_layout = policy.mask_layout
    optimizer = optimizers.build(policy, tc)  # train.optimizer: adam or muon
    replicated = group.wrap(compiled, device)  # DDP under torchrun: update() averages gradients
    run = Runner.create(vecenv, compiled, cfg, device)
    return Network(policy, compiled, replicated, optimizer), run


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


class _Opened:
    """Rank 0's run directory (its lock) and tracking: open() once the envs and the policy are
    built, close(summary) after the run (summary.json, the backends, the lock)."""

    def __init__(self, spec: RunSpec, run_dir: Path | None) -> None:
        self.spec, self.run_dir = spec, run_dir
        self.lock: rundir.Lock | None = None
        self.tracker: tracking.Tracking | None = None

    def open(self) -> tracking.Tracking:
        """Take the run directory (a new run's is made, with its config.toml; a resumed one loses
        its half-written files and the metrics logged after its checkpoint) and open the tracking,
        the first hook. A run resumed without a checkpoint (it saved none) starts again at update 0."""
        spec, directory, resumed = self.spec, self.run_dir, self.spec.resumed
        if directory is not None and not spec.resuming:
            self.lock = rundir.create(directory, spec.env_name, spec.config_toml)
        elif directory is not None:
            self.lock = rundir.Lock(directory)
            rundir.remove_stale(directory)
            rundir.truncate_metrics(directory, 0 if resumed is None else int(resumed["update"]))
        step = (0 if spec.resuming else None) if resumed is None else int(resumed["steps"])
        self.tracker = tracking.open_tracking(directory, spec.env_name, spec.cfg, step)
        return self.tracker

    def close(self, summary: dict[str, Any] | None) -> None:
        try:
            if self.tracker is not None:
                self.tracker.close(summary)
        finally:
            if self.lock is not None:
                self.lock.release()


@dataclass
class _Training:
    """The training loop: alternate collect / advantages / update until solved, or out of steps or
    time (train(): updates(), then finish(), the final save and the summary).
    Ctrl-C (or a signal that `signals.stop_on` turns into an interruption) stops the loop; the
    policy is still saved and the summary returned. Under torchrun, `group` syncs the ranks
    after every rollout; a lost rank stops the loop (rank 0 saves) and is raised as RankLost.
    Any other error stops it too: saved where possible, then raised as failure.TrainingError.
    The fields after `update_index` are what the steps share: the last checkpoint, how the run
    stopped, the losses of the last update."""

    spec: RunSpec
    cfg: Config  # this rank's (group.rank_config: its seeds)
    run: Runner
    net: Network
    group: distributed.Solo
    hooks: Sequence[Hook]
    hold: signals.Hold
    solved_score: float | None
    start: float  # perf_counter at the run's start (earlier by a resume's elapsed seconds)
    run_dir: Path | None  # rank 0's run directory
    update_index: int  # the last update started (the checkpoint's, before the first)
    tc: dict[str, Any] = field(init=False)  # cfg["train"]
    saver: checkpoint.Saver | None = field(init=False)
    saved: Path | None = field(init=False)
    steps_done: int = field(init=False)  # agent steps at the end of the last finished update
    lost: distributed.RankLost | None = None
    error: BaseException | None = None
    message: str | None = None
    reason: str = "steps"
    signal_name: str | None = None
    losses: dict[str, float] = field(default_factory=dict)
    collecting: bool = False  # inside an update's rollout: stopped there, the update never happened

    def __post_init__(self) -> None:
        self.tc = self.cfg["train"]
        self.saver = None
        if self.run_dir is not None:
            self.saver = checkpoint.Saver(self.run_dir, self.cfg, self.spec.checkpoint)
        self.saved = self.saver.history[-1] if self.saver and self.saver.history else None
        self.steps_done = self.run.steps

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
        tc, run, net = self.tc, self.run, self.net
        optimizer = net.optimizer
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
                    self.losses = update(net.replicated, optimizer, run.exp, adv, returns, tc, run.recurrent)
                failure.check_losses(self.update_index, self.losses)
            self.steps_done = run.steps
            if self.saver is not None and self.saver.due(self.update_index):
                self.save()
            if self.hooks:
                self.call_hooks(solved, (run.steps - s0) / max(time.perf_counter() - t0, 1e-9))
        return self.reason == "solved"

    def call_hooks(self, solved: bool, sps: float) -> None:
        info = progress(
            self.spec.env_name,
            self.cfg,
            self.run,
            self.update_index,
            self.start,
            sps,
            self.solved_score,
            solved,
            self.losses,
        )
        info["learning_rate"] = self.net.optimizer.param_groups[0]["lr"]
        # train.video_interval plays the policy
        info["policy"], info["vecenv"] = self.net.policy, self.run.vecenv
        for hook in self.hooks:
            hook(info)

    def save(self) -> Path:
        run = self.run
        mean_return = run.window_mean("episode_return")
        elapsed = time.perf_counter() - self.start
        state = resume.snapshot(run, self.net.optimizer, self.update_index, elapsed, self.tc["seed"])
        self.saved = checkpoint.save(
            self.run_dir,
            self.spec.env_name,
            self.cfg,
            self.net.policy,
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
            "env": self.spec.env_name,
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
