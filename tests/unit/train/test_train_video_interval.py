"""`train.video_interval`: every N updates one episode of the current policy, on an env of its own, to
the run's videos/ folder and TensorBoard (an animated GIF image summary, read back here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pufferlib

pytest.importorskip("torch")
pytest.importorskip("tensorboard")
iio = pytest.importorskip("imageio.v3")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

ROOT = Path(pufferlib.__file__).resolve().parents[1]


def progress(update: int, policy, vecenv) -> dict:
    """What the training loop hands its hooks after update `update` (loop.progress), with the policy."""
    return {
        "update": update, "steps": 64 * update, "elapsed": 1.0 * update, "sps": 64.0, "episodes": 0,
        "mean_return": None, "mean_length": None, "losses": {}, "env_stats": {}, "device": "cpu",
        "policy": policy, "vecenv": vecenv,
    }  # fmt: skip


def events(directory: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(directory), size_guidance={"images": 0})
    acc.Reload()
    return acc


def track(directory: Path, env_name: str, updates: int, **overrides) -> None:
    """The run's tracking hook (tracking.open_tracking) called after `updates` updates of a fresh policy."""
    from pufferlib.environments import get
    from pufferlib.train import config
    from pufferlib.train.run import tracking
    from pufferlib.train.setup import make_policy, make_vecenv

    cfg = config.load(env_name, {"vec.num_envs": 2, "train.device": "cpu", **overrides})
    binding = get(env_name)
    vecenv = make_vecenv(binding, cfg)
    try:
        policy = make_policy(binding, vecenv.driver_env, cfg)
        hook = tracking.open_tracking(directory, env_name, cfg)
        for update in range(1, updates + 1):
            hook(progress(update, policy, vecenv))
        hook.close({"stop_reason": "steps"})
    finally:
        vecenv.close()


@pytest.mark.parametrize("env_name", ["ocean/cartpole", "classic_control/CartPole-v1"])
def test_every_second_update_records_an_episode(tmp_path, env_name):
    track(tmp_path, env_name, 4, **{"train.video_interval": 2})
    suffix = ".mp4" if (tmp_path / "videos" / "update_000002.mp4").exists() else ".gif"
    written = sorted(p.name for p in (tmp_path / "videos").iterdir())
    assert written == [f"update_000002{suffix}", f"update_000004{suffix}"]
    frames = iio.imread(tmp_path / "videos" / written[0])
    assert frames.ndim == 4 and frames.shape[-1] == 3 and len(frames) >= 2
    assert all(frame.min() != frame.max() for frame in frames)
    images = events(tmp_path).Images("videos/episode")
    assert [image.step for image in images] == [128, 256]
    gif = images[0].encoded_image_string
    assert gif[:6] == b"GIF89a"
    decoded = iio.imread(gif, extension=".gif")
    assert decoded.shape[1:] == (images[0].height, images[0].width, 3) == frames.shape[1:]
    assert np.ptp(decoded) > 0


def test_off_by_default_and_no_videos_folder(tmp_path):
    from pufferlib.train import config
    from pufferlib.train.run import tracking

    cfg = config.load("ocean/cartpole", {})
    assert cfg["train"]["video_interval"] == 0
    hook = tracking.open_tracking(tmp_path, "ocean/cartpole", cfg)
    hook(progress(1, None, None))
    hook.close({"stop_reason": "steps"})
    assert hook.video is None and not (tmp_path / "videos").exists()


def test_a_negative_interval_is_a_config_error(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "train", "ocean/cartpole", "--train.video-interval", "-1"],
        cwd=tmp_path, env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert "train.video_interval must be >= 0, got -1" in err
    assert list(tmp_path.iterdir()) == []


def test_wandb_gets_the_video(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for name in ("CONFIG", "CACHE", "DATA"):
        monkeypatch.setenv(f"WANDB_{name}_DIR", str(tmp_path / name.lower()))
    track(tmp_path, "ocean/cartpole", 1, **{"train.video_interval": 1, "track.wandb": True})
    logged = list((tmp_path / "wandb").glob("offline-run-*/files/media/videos/videos/episode_64_*"))
    assert len(logged) == 1 and logged[0].suffix == next((tmp_path / "videos").iterdir()).suffix


def test_puffer_train_writes_videos(tmp_path):
    """As a user runs it: `puffer train --train.video-interval 2` leaves videos/ and the image summary."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    argv = ["train", "ocean/cartpole", "--json", "--train.total-timesteps", "512", "--train.num-steps", "64"]
    argv += [
        "--vec.num-envs",
        "2",
        "--train.device",
        "cpu",
        "--train.video-interval",
        "2",
        "--train.run-dir",
        "run",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    written = sorted(p.stem for p in (tmp_path / "run" / "videos").iterdir())
    assert written == ["update_000002", "update_000004"]
    assert len(events(tmp_path / "run").Images("videos/episode")) == 2
