"""The training loop: build the run (setup.py), then alternate collect / advantages / update
(ppo.py) until solved or out of steps or time, saving checkpoints on the way (checkpoint.py).

`learn` builds the envs, the policy and the optimizer, restores a checkpoint's state when it
resumes one (resume.py), and runs `_loop`. Every way the loop ends saves a final checkpoint where it
can: the budget or `solved`, Ctrl-C and the stop signals (signals.py), a lost rank (distributed.py)
and any other error (failure.py), which is raised as TrainingError once the run is saved.
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
from pufferlib.train import checkpoint, distributed, failure, normalize, resume, rundir, signals, versus
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo import Runner, advantages, collect, update
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
                optimizer = torch.optim.Adam(
                    policy.parameters(), lr=tc["learning_rate"], eps=1e-5, fused=True
                )
                learner = group.wrap(agent, device)  # DDP under torchrun: update() averages gradients
                run = Runner.create(vecenv, agent, cfg, device)
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
                summary = _loop(
                    env_name,
                    solved_score,
                    cfg,
                    run,
                    policy,
                    learner,
                    optimizer,
                    start,
                    hooks,
                    group,
                    first,
                    hold,
                )
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


def _resume_payload(env_name: str, resume_from: str | Path | None) -> dict[str, Any] | None:
    """The checkpoint to resume from (a file, or a run directory's latest), checked before anything
    is built."""
    if resume_from is None:
        return None
    path = Path(resume_from)
    if path.is_dir():
        _, _, path = resume.locate(path, env_name, None)
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
    first_update: int = 0,
    hold: signals.Hold | None = None,
) -> dict[str, Any]:
    """Alternate collect / advantages / update until solved, or out of steps or time. `agent` is
    `policy`, or its torch.compile'd twin sharing the same parameters (checkpoints save `policy`).
    Ctrl-C (or a signal that `signals.stop_on` turns into an interruption) stops the loop; the
    policy is still saved and the summary returned. Under torchrun, `group` syncs the ranks
    after every rollout; a lost rank stops the loop (rank 0 saves) and is raised as RankLost.
    Any other error stops it too: saved where possible, then raised as failure.TrainingError."""
    tc = cfg["train"]
    group = group or distributed.Solo()
    hold = hold or signals.Hold()
    run_dir = rundir.path(tc["run_dir"], env_name) if group.main else None
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)  # train() made it; learn() alone may not have
    saver = checkpoint.Saver(run_dir, cfg) if run_dir else None
    saved = saver.history[-1] if saver and saver.history else None
    lost, error, message = None, None, None
    reason, signal_name, update_index, losses = "steps", None, first_update, {}

    def save() -> Path:
        nonlocal saved
        mean_return = run.window_mean("episode_return")
        state = resume.snapshot(run, optimizer, update_index, time.perf_counter() - start, tc["seed"])
        saved = checkpoint.save(
            run_dir,
            env_name,
            cfg,
            policy,
            run.steps,
            update_index,
            mean_return,
            normalize.state(run.vecenv),
            state,
        )
        saver.saved(saved, mean_return)
        return saved

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
                failure.check_losses(update_index, losses)
            if saver is not None and saver.due(update_index):
                save()
            if hooks:
                sps = (run.steps - s0) / max(time.perf_counter() - t0, 1e-9)
                info = progress(env_name, cfg, run, update_index, start, sps, solved_score, solved, losses)
                info["learning_rate"] = optimizer.param_groups[0]["lr"]
                for hook in hooks:
                    hook(info)
            if reason == "solved":
                break
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP under signals.stop_on: save, report
        hold.start()  # first: a second Ctrl-C must wait for the save
        reason, signal_name = "interrupted", getattr(stop, "signal_name", None)
    except distributed.RankLost as lost_rank:  # another rank is gone: save what this one has, then raise
        hold.start()
        lost = lost_rank
    except Exception as e:  # a worker died, the disk filled, the run directory went, a NaN loss
        hold.start()
        reason, error, message = "error", e, failure.describe(e, update_index, run_dir)
    hold.start()
    seconds = time.perf_counter() - start
    mean_return = run.window_mean("episode_return")
    if saver is not None and not isinstance(error, failure.NonFiniteLoss):
        try:
            save()
        except checkpoint.CheckpointSaveError as e:
            if message is None:
                reason, error, message = "error", e, str(e)
            elif run_dir.is_dir() and not isinstance(error, checkpoint.CheckpointSaveError):
                message += f"; {e}"
    if lost is not None:
        lost.checkpoint = None if saved is None else str(saved)
        raise lost
    summary = {
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
    if message is not None:
        summary["error"] = message
        raise failure.TrainingError(message, summary) from error
    return summary


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
