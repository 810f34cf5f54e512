"""Resume a run: what a checkpoint must hold beyond the weights, and how a run directory continues.

`snapshot` captures the training state at a rollout boundary (after an update): the optimizer
(Adam's moments and step counts; under train.optimizer muon, Muon's momentum buffers too) and
its name, the learning rate, global steps, updates and episodes, the
episode statistics window (so the mean return and `solved` carry on), the elapsed seconds (the
time budget and the time axis continue), the RNG states of torch and numpy, and the seed the
envs are reset with when the run continues. `restore` puts it back into a freshly built run.

The envs themselves are not saved: an env's state (a physics simulation, a C struct, a worker
process) has no portable form. A resumed run resets its envs with `reset_seed(seed, update)`,
a seed derived from the run's seed and the update it resumes after, so a resume is deterministic
(the same checkpoint resumed twice gives the same curve) and its episodes start afresh. The
uninterrupted run goes on with its episodes in progress instead, so the curves after the resume
point agree in steps, learning rate and trend, not bit for bit (tests/unit/train/test_train_resume.py
states the tolerance).

What a run directory resumes from (its config.toml, plus the new overrides, and its latest
checkpoint that holds a `resume` state) is found once, by spec.RunSpec.build.
"""

from __future__ import annotations

import collections
import random
from typing import Any

import numpy as np
import torch

from pufferlib.train.config import ConfigError
from pufferlib.train.ppo import optimizer as optimizers


class ResumeError(ConfigError):
    """The folder cannot be resumed (it holds no run, a run of another env, or no full checkpoint)."""


def reset_seed(seed: int, update: int) -> int:
    """The seed the envs are reset with before update `update` + 1: the run's seed at the start,
    then one derived from it and the update a resume continues after."""
    return seed if update == 0 else (seed + 1_000_003 * update) % 2**31


def snapshot(
    run: Any, optimizer: optimizers.Optimizer, update: int, seconds: float, seed: int
) -> dict[str, Any]:
    """The training state after update `update` of a run seeded with `seed` (tensors and plain
    values: weights_only loads it)."""
    keys, pos, has_gauss, gauss = np.random.get_state()[1:]
    state = {
        "optimizer": optimizer.state_dict(),
        "optimizer_name": optimizers.name_of(optimizer),
        "learning_rate": float(optimizer.param_groups[0]["lr"]),
        "steps": int(run.steps),
        "update": int(update),
        "episodes": int(run.episodes),
        "seconds": float(seconds),
        "episode_stats": {key: [float(v) for v in values] for key, values in run.episode_stats.items()},
        "rng": {
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
            "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos)},
            "numpy_gauss": [int(has_gauss), float(gauss)],
            "python": _python_state(),
        },
        "env_seed": reset_seed(seed, update),
    }
    return state


def restore(state: dict[str, Any], run: Any, optimizer: optimizers.Optimizer) -> tuple[int, float]:
    """Put `state` back (optimizer, counters, episode statistics, RNGs); returns (update, seconds).
    Call it last before the loop: building the policy and the envs draws from the RNGs. ResumeError
    when the checkpoint's optimizer is not the one train.optimizer builds now."""
    saved, now = state.get("optimizer_name", "adam"), optimizers.name_of(optimizer)  # older: Adam
    if saved != now:
        raise ResumeError(
            f"the checkpoint was trained with train.optimizer {saved}, this run asks for {now}: "
            f"resume with --train.optimizer {saved}"
        )
    try:
        optimizer.load_state_dict(state["optimizer"])
        optimizer.param_groups[0]["lr"] = state["learning_rate"]
        run.steps, run.episodes = int(state["steps"]), int(state["episodes"])
        run.episode_stats = {
            key: collections.deque(values, maxlen=run.window)
            for key, values in state["episode_stats"].items()
        }
        rng = state["rng"]
        torch.set_rng_state(rng["torch"])
        if rng["cuda"] and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(rng["cuda"])
        has_gauss, gauss = rng["numpy_gauss"]
        keys = rng["numpy"]["keys"].numpy().astype(np.uint32)
        np.random.set_state(("MT19937", keys, rng["numpy"]["pos"], has_gauss, gauss))
        random.setstate(_python_tuple(rng["python"]))
        return int(state["update"]), float(state["seconds"])
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ResumeError(
            f"the checkpoint's resume state does not fit this run: {type(e).__name__}: {e}"
        ) from e


def _python_state() -> list[Any]:
    version, internal, gauss = random.getstate()
    return [version, list(internal), gauss]


def _python_tuple(saved: list[Any]) -> tuple:
    version, internal, gauss = saved
    return (version, tuple(internal), gauss)
