"""Videos of agents: frames of one env, written as .mp4 or .gif, or printed as ANSI text.

A binding draws frames in one of two ways, tried in this order: its env's render() returns an RGB
(or grey) numpy array (the native Ocean envs, gymnasium's classic control, Box2D and MuJoCo made with
render_mode "rgb_array"), or its observations are the frames (the binding's `pixels` shape: Atari,
Procgen, Crafter, ...; found where the matrix's `render` check finds them, batch_checks.frame_field).
Text envs (the Ocean envs, NetHack, MiniHack) draw a string instead: `puffer eval --render`.

The env recorded is its own instance, one env in this process (recording_env): `puffer eval --video`
plays its episodes there, and `puffer train --train.video-interval N` (train/video_hook.py) plays
one episode there every N updates, so the training vector env never renders.

Encoding: GIF with Pillow (always there); MP4 with the ffmpeg that imageio-ffmpeg bundles, or an
`ffmpeg` on PATH; without either a .mp4 is a VideoError saying to write a .gif or install ffmpeg.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import pufferlib.environments as envs
from pufferlib.batch_checks import frame_field, frames_of
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo import normalize

FORMATS = (".mp4", ".gif")
DEFAULT_FPS = 30
TAG = "videos/episode"  # the TensorBoard and W&B name of train.video_interval's recordings


class VideoError(ConfigError):
    """A video cannot be made: the binding draws no frames, the format is unknown, no ffmpeg."""


def ffmpeg() -> str | None:
    """The ffmpeg executable: imageio-ffmpeg's bundled one, else `ffmpeg` on PATH, else None."""
    try:
        with warnings.catch_warnings():  # imageio-ffmpeg 0.3 imports the deprecated pkg_resources
            warnings.simplefilter("ignore")
            import imageio_ffmpeg

            return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return shutil.which("ffmpeg")


def check_path(path: str | Path) -> Path:
    """`path` if a video can be written there: a known format and, for .mp4, an ffmpeg."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise VideoError(f"--video {path}: write .mp4 or .gif (the format follows the file name)")
    if path.suffix.lower() == ".mp4" and ffmpeg() is None:
        raise VideoError(
            f"--video {path}: an .mp4 needs ffmpeg, and neither imageio-ffmpeg nor an ffmpeg on PATH "
            "is here: write a .gif instead (--video out.gif), or pip install imageio-ffmpeg"
        )
    return path


def to_rgb(frame: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 image from a frame: RGB or RGBA (H, W, C), grey (H, W) or (H, W, 1), or
    channels first (C, H, W) as a frame stack of grey images (the newest, last, is shown)."""
    frame = np.asarray(frame)
    if frame.ndim == 3 and frame.shape[0] in (1, 3, 4) and frame.shape[-1] not in (1, 3, 4):
        frame = frame[-1] if frame.shape[0] != 3 else np.moveaxis(frame, 0, -1)
    if frame.ndim == 3 and frame.shape[-1] == 4:
        frame = frame[..., :3]
    if frame.ndim == 3 and frame.shape[-1] == 1:
        frame = frame[..., 0]
    if frame.ndim == 2:
        frame = np.repeat(frame[..., None], 3, axis=-1)
    if frame.ndim != 3 or frame.shape[-1] != 3:
        raise VideoError(f"a frame of shape {frame.shape} is no image")
    if frame.dtype != np.uint8:
        scale = 255.0 if frame.size and float(np.max(frame)) <= 1.0 else 1.0
        frame = np.clip(frame * scale, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(frame)


def recording_env(binding: envs.Binding, cfg: Config, mode: str = "rgb_array") -> tuple[Any, Any]:
    """(env, raw): one env of `binding` in this process, asked to render in `mode` where its maker
    takes a render_mode, and `env` behind the run's observation normalisation (raw: without it)."""
    kwargs = dict(cfg["env"])
    if binding.native:  # one C instance, not vec.num_envs of them
        kwargs.update(num_envs=1, num_threads=1)
    creator = binding.env_creator()
    seed = cfg["train"]["seed"]
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame (classic control, Box2D): no screen
    with warnings.catch_warnings():  # gymnasium warns of a mode the env lacks: no_frames says so
        warnings.filterwarnings("ignore", message=".*render_mode")
        try:
            raw = creator(**{**kwargs, "render_mode": mode}, seed=seed)
        except TypeError:  # a maker without render_mode (the Python Ocean envs) renders its own way
            raw = creator(**kwargs, seed=seed)
    return normalize.wrap(raw, cfg), raw


def _rendered(env: Any) -> tuple[Any, str]:
    """What env.render() returns (or the wrapped gymnasium/PettingZoo env's), and an error, if any."""
    try:
        out = env.render()
        inner = getattr(env, "env", None)
        if out is None and inner is not None and hasattr(inner, "render"):
            out = inner.render()
        return out, ""
    except Exception as e:  # a render mode the env lacks, no display: the caller says it cannot draw
        return None, f"{type(e).__name__}: {e}"


def rgb_frame(env: Any, binding: envs.Binding) -> np.ndarray | None:
    """The current frame of `env` (one env, agent row 0) as an (H, W, 3) uint8 image, or None."""
    out, _ = _rendered(env)
    if isinstance(out, np.ndarray) and out.ndim in (2, 3) and out.size:
        return to_rgb(out)
    if binding.pixels:
        field = frame_field(env, tuple(binding.pixels))
        return to_rgb(frames_of(np.asarray(env.observations)[:1], env, field)[0])
    return None


def text_frame(env: Any) -> str | None:
    """The current frame of `env` as text (ANSI colours kept), or None if it draws none."""
    out, _ = _rendered(env)
    return out if isinstance(out, str) else None


def no_frames(binding: envs.Binding, env: Any, text: bool = False) -> VideoError:
    """The error for a binding that draws nothing, naming it and what does."""
    out, error = _rendered(env)
    got = error or f"its render() returns {type(out).__name__}"
    if text:
        return VideoError(
            f"{binding.name} draws no text frames ({got}); --render prints the text of envs whose "
            "render() returns a string: the native Ocean envs (render_mode ansi), the Python Ocean envs, "
            "NetHack and MiniHack. For pixels, record a video: --video out.gif"
        )
    pixels = [b.name for b in envs.bindings() if b.pixels]
    shown = ", ".join(pixels[:6]) + (f" and {len(pixels) - 6} more" if len(pixels) > 6 else "")
    return VideoError(
        f"{binding.name} draws no frames ({got}, and it declares no pixel observations). Bindings "
        "that do: the native Ocean envs (ocean/cartpole, ocean/breakout, ...), classic_control/*, "
        "Box2D and MuJoCo (render() RGB arrays)"
        + (f", and those with pixel observations: {shown}" if shown else "")
        + (". For text, --render prints it" if isinstance(out, str) else "")
    )


def fps_of(env: Any) -> int:
    """The env's own frame rate (gymnasium's metadata render_fps), else DEFAULT_FPS."""
    for candidate in (env, getattr(env, "env", None)):
        fps = (getattr(candidate, "metadata", None) or {}).get("render_fps")
        if isinstance(fps, int | float) and fps > 0:
            return int(fps)
    return DEFAULT_FPS


def thumbnail_png(frame: np.ndarray, side: int = 72) -> bytes:
    """A PNG of `frame` (any shape to_rgb takes) shrunk to at most `side` pixels a side, by Pillow."""
    from PIL import Image

    image = Image.fromarray(to_rgb(frame))
    image.thumbnail((side, side), Image.Resampling.NEAREST)  # pixel art stays crisp
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def gif_bytes(frames: Sequence[np.ndarray], fps: int) -> bytes:
    """An animated GIF (looping) of `frames`, by Pillow."""
    from PIL import Image

    images = [Image.fromarray(frame) for frame in frames]
    out = io.BytesIO()
    duration = max(round(1000 / fps), 20)  # browsers slow GIFs faster than 50 frames/s
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=duration, loop=0)
    return out.getvalue()


def write(path: str | Path, frames: Sequence[np.ndarray], fps: int = DEFAULT_FPS) -> Path:
    """Write `frames` ((H, W, 3) uint8, one size) to `path`, .gif or .mp4 (H.264, yuv420p)."""
    path = check_path(path)
    if not frames:
        raise VideoError(f"{path}: no frames to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        path.write_bytes(gif_bytes(frames, fps))
        return path
    height, width = frames[0].shape[:2]
    command = [
        str(ffmpeg()),
        *("-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24"),
        *("-s", f"{width}x{height}", "-r", str(fps), "-i", "-"),
        # H.264 in yuv420p (what every player plays) needs even sides: pad by a pixel where odd
        *("-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p", str(path)),
    ]
    data = b"".join(np.ascontiguousarray(frame).tobytes() for frame in frames)
    done = subprocess.run(command, input=data, capture_output=True, timeout=600)
    if done.returncode != 0:
        raise VideoError(f"{path}: ffmpeg failed: {done.stderr.decode(errors='replace').strip()[-500:]}")
    return path


class Recorder:
    """Watches the recording env (recording_env's `raw`): call it after every step to keep its frame
    (video) or print its text frame (text=True; on a terminal each frame replaces the last, at the
    env's frame rate). The first step that draws nothing raises the no_frames error."""

    CLEAR = "\033[H\033[2J"

    def __init__(self, binding: envs.Binding, raw: Any, text: bool = False, out: Any = None) -> None:
        self.binding, self.raw, self.text = binding, raw, text
        self.out = out if out is not None else sys.stdout
        self.frames: list[np.ndarray] = []
        self.count = 0  # frames drawn (text frames are printed, not kept)
        self.fps = fps_of(raw)
        self.live = bool(getattr(self.out, "isatty", lambda: False)())

    def __call__(self) -> None:
        self.count += 1
        if not self.text:
            frame = rgb_frame(self.raw, self.binding)
            if frame is None:
                raise no_frames(self.binding, self.raw)
            self.frames.append(frame)
            return
        text = text_frame(self.raw)
        if text is None:
            raise no_frames(self.binding, self.raw, text=True)
        try:
            if self.live:
                self.out.write(self.CLEAR + text + "\n")
                self.out.flush()
                time.sleep(1 / self.fps)
            else:
                self.out.write(text + "\n\n")
        except BrokenPipeError:  # `| head` has read enough: the rest goes nowhere (Python's own recipe)
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())

    def save(self, path: str | Path) -> Path:
        return write(path, self.frames, self.fps)
