"""Evaluation: play a checkpoint's policy for some episodes and report its mean return.

The env, the policy and the device are built by setup.py from the checkpoint's own config, and the
policy acts through act.Actor, the same act step as training rollouts (episode starts, LSTM state,
action masks), so a policy is evaluated exactly as it was trained to act; observations are
normalised with the statistics the checkpoint saved (frozen), rewards are the env's own.

With `video` (a .mp4 or .gif path) or `render` (ANSI text frames on stdout) the episodes are played on
one env in this process that draws its frames (video.recording_env), not on the config's vector env.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import pufferlib.environments as envs
from pufferlib.train import config as configuration
from pufferlib.train.config import ConfigError
from pufferlib.train.ppo import normalize
from pufferlib.train.ppo.act import Actor, episodes_in
from pufferlib.train.ppo.rollout import METRICS, is_episode_info
from pufferlib.train.run import checkpoint as checkpoints
from pufferlib.train.setup import make_policy, make_vecenv, resolve_device


def evaluate(
    env_name: str,
    checkpoint: str | Path,
    episodes: int = 100,
    overrides: dict[str, Any] | list[str] | None = None,
    deterministic: bool = False,
    timeout: float = 600.0,
    video: str | Path | None = None,
    render: bool = False,
) -> dict[str, Any]:
    """Run the checkpoint's policy for `episodes` episodes; returns the mean return and more.

    `deterministic` takes the most likely action instead of sampling (wrong for envs whose optimal
    policy is stochastic, e.g. ocean/stochastic). `overrides` change the checkpoint's config
    (e.g. {"vec.num_envs": 4}); sections that shape the policy must stay as trained. An env that
    does not finish `episodes` episodes within `timeout` seconds raises TimeoutError. `video`: write
    the episodes' frames there (.mp4 or .gif); `render`: print their text frames (both: video.py).
    """
    from pufferlib.train.run import video as videos

    if episodes < 1:
        raise ConfigError(f"episodes must be >= 1, got {episodes}")
    start = time.perf_counter()
    payload, cfg = _load(env_name, checkpoint, overrides)
    device = resolve_device(cfg["train"]["device"])
    binding = envs.get(env_name)
    watch = None
    if video is not None or render:
        video = None if video is None else videos.check_path(video)  # before any episode is played
        vecenv, raw = videos.recording_env(binding, cfg, "ansi" if render and video is None else "rgb_array")
        watch = videos.Recorder(binding, raw, text=video is None)
    else:
        vecenv = make_vecenv(binding, cfg)
    try:
        policy = make_policy(binding, vecenv.driver_env, cfg, device, copies=1).to(device)
        try:
            policy.load_state_dict({k: v.to(device) for k, v in payload["state_dict"].items()})
        except RuntimeError as e:
            raise ConfigError(
                f"{checkpoint}: the weights do not fit the policy the config builds: {e}"
            ) from e
        policy.eval()
        if isinstance(vecenv, normalize.VecNormalize):  # act on observations as the policy saw them
            vecenv.load_state_dict(payload.get("normalize") or {})
            vecenv.training = False
        actor = Actor(vecenv, policy, device, greedy=deterministic)
        vecenv.async_reset(cfg["train"]["seed"])
        metric = METRICS.get(cfg["train"]["solve_metric"], "episode_return")
        returns, lengths, steps = _play(vecenv, actor, episodes, start + timeout, watch, metric)
    finally:
        vecenv.close()
    mean = float(np.mean(returns))
    shown = {}
    if watch is not None:
        shown = {"frames": watch.count, "fps": watch.fps}
        if video is not None:
            shown["video"] = str(watch.save(video))
    return {
        "env": env_name,
        "checkpoint": str(checkpoint),
        "episodes": len(returns),
        "mean_return": round(mean, 4),
        "std_return": round(float(np.std(returns)), 4),
        "mean_length": round(float(np.mean(lengths)), 2),
        "solved": bool(binding.solved is not None and mean >= binding.solved),
        "solved_score": binding.solved,
        "deterministic": deterministic,
        "steps": steps,
        "seconds": round(time.perf_counter() - start, 3),
        **shown,
    }


def _load(
    env_name: str, checkpoint: str | Path, overrides: dict[str, Any] | list[str] | None
) -> tuple[dict[str, Any], configuration.Config]:
    """The checkpoint's payload, and its config with `overrides` on top; it must be `env_name`'s."""
    payload = checkpoints.load(checkpoint)
    if payload["env"] != env_name:
        raise ConfigError(
            f"checkpoint {checkpoint} was trained on {payload['env']}, not {env_name}; "
            f"run `puffer eval {payload['env']} --checkpoint {checkpoint}`"
        )
    cfg = configuration.copy_config(payload["config"])
    if isinstance(overrides, list):
        overrides = configuration.parse_args(overrides)
    for dotted, value in configuration.flatten(overrides or {}).items():
        section, _, key = dotted.partition(".")
        configuration.set_value(cfg, section, key, value, source=f"--{dotted}")
    return payload, cfg


def _play(
    vecenv,
    actor: Actor,
    episodes: int,
    deadline: float,
    watch: Callable[[], None] | None = None,
    metric: str = "episode_return",
) -> tuple[list[float], list[float], int]:
    """(returns, lengths, agent steps) of the first `episodes` episodes to finish; `watch()` is
    called after every step (and the reset), while the env holds that step's state. An episode's
    figure is its return, or where the env reports none (PufferLib 3.0's C envs log a `score`), the
    info the config's train.solve_metric averages (`metric`)."""
    returns: list[float] = []
    lengths: list[float] = []
    steps = 0
    while len(returns) < episodes:
        if time.perf_counter() > deadline:
            raise TimeoutError(
                f"evaluation stopped after {steps} steps: {len(returns)} of {episodes} episodes finished "
                "before the timeout (does the env ever end an episode?)"
            )
        obs, _, terminals, truncations, infos, env_ids, masks = vecenv.recv()
        if watch is not None:
            watch()
        masks = np.array(masks, dtype=bool)
        steps += int(masks.sum())
        for info in infos:
            if isinstance(info, dict) and is_episode_info(info):
                n = episodes_in(info)  # a native env's info: the means of n episodes
                returns.extend([float(info.get("episode_return", info.get(metric, np.nan)))] * n)
                lengths.extend([float(info.get("episode_length", 0))] * n)
        step = actor(obs, terminals, truncations, np.asarray(env_ids, dtype=np.int64), masks)
        vecenv.send(step.action.cpu().numpy())
    return returns[:episodes], lengths[:episodes], steps
