"""`train.video_interval = N`: every N updates, one evaluation episode of the current policy, recorded.

The episode is played on an env of its own (video.recording_env: one env in this process, asked for
RGB frames), never on the training vector env, so training pays for that episode alone. It is written
to the run directory as videos/update_<N>.mp4 (.gif where there is no ffmpeg), and handed to every
tracking backend that takes videos: TensorBoard gets an animated GIF image summary (what
SummaryWriter.add_video writes, without its moviepy dependency), W&B a wandb.Video of the file.

The hook reads the policy from the progress dict (`progress["policy"]`, and `progress["vecenv"]` for
the observation statistics of a run that normalises them); a trainer that passes none gets one
warning on stderr and no videos.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import pufferlib.environments as envs
from pufferlib.train.config import Config
from pufferlib.train.ppo import normalize
from pufferlib.train.run import video as videos

EPISODE_SECONDS = 60.0  # an episode that has not ended by then is cut (the video keeps what it has)


class VideoHook:
    """Called with every update's progress dict; records on updates that are multiples of the
    interval. `backends`: the run's tracking backends; those with a `video(step, path, frames, fps)`
    method get each recording."""

    def __init__(self, directory: Path, env_name: str, cfg: Config, backends: list[Any]) -> None:
        self.interval = int(cfg["train"].get("video_interval", 0))
        self.folder = directory / "videos"
        self.binding = envs.get(env_name)
        self.cfg = cfg
        self.backends = backends
        self.suffix = ".mp4" if videos.ffmpeg() else ".gif"
        self.env: Any = None
        self.raw: Any = None
        self.warned = False

    def __call__(self, progress: dict[str, Any]) -> None:
        update = int(progress["update"])
        if not self.interval or update % self.interval:
            return
        policy = progress.get("policy")
        if policy is None:
            if not self.warned:
                print(
                    "pufferlib: train.video_interval: this trainer passes no policy to its hooks "
                    "(progress['policy']): no videos are recorded",
                    file=sys.stderr,
                )
                self.warned = True
            return
        frames, fps = self.episode(policy, progress.get("vecenv"), progress["device"], update)
        path = videos.write(self.folder / f"update_{update:06d}{self.suffix}", frames, fps)
        for backend in self.backends:
            if hasattr(backend, "video"):
                backend.video(int(progress["steps"]), path, frames, fps)

    def episode(
        self, policy: Any, trained_env: Any, device: str, update: int
    ) -> tuple[list[np.ndarray], int]:
        """The frames of one episode of `policy` on the hook's own env (made on first use)."""
        from pufferlib.train.ppo.act import Actor

        if self.env is None:
            self.env, self.raw = videos.recording_env(self.binding, self.cfg)
        if isinstance(self.env, normalize.VecNormalize):  # the statistics the policy trains on, frozen
            stats = normalize.state(trained_env) if trained_env is not None else None
            self.env.load_state_dict(stats or {})
            self.env.training = False
        recorder = videos.Recorder(self.binding, self.raw)
        actor = Actor(self.env, policy, device)
        self.env.async_reset(int(self.cfg["train"]["seed"]) + update)
        deadline = time.perf_counter() + EPISODE_SECONDS
        while time.perf_counter() < deadline:
            obs, _, terminals, truncations, infos, ids, masks = self.env.recv()
            recorder()
            if any(isinstance(info, dict) and "episode_return" in info for info in infos):
                break
            step = actor(
                obs, terminals, truncations, np.asarray(ids, dtype=np.int64), np.array(masks, dtype=bool)
            )
            self.env.send(step.action.cpu().numpy())
        return recorder.frames, recorder.fps

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None
