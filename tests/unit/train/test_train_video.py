"""`puffer eval --video` and `--render`, run as a user runs them: a short real training run makes the
checkpoint, `puffer eval` (a subprocess) records it, and the video is decoded back into frames."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pufferlib

pytest.importorskip("torch")
iio = pytest.importorskip("imageio.v3")

# imageio's ffmpeg reader (imageio-ffmpeg 0.3) warns of pkg_resources and setDaemon on import
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
ROOT = Path(pufferlib.__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def puffer(*argv: str, cwd: Path, prelude: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    """`puffer ARGV` in `cwd` with this checkout's library (`prelude`: Python run first)."""
    code = f"{prelude}\nimport sys\nfrom pufferlib.cli import main\nsys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=cwd, env=env or ENV, capture_output=True, timeout=300
    )


def checkpoint(tmp: Path, name: str) -> Path:
    """One PPO update on `name` (real training, on the CPU): its checkpoint."""
    run = tmp / name.replace("/", "_")
    done = puffer(
        "train", name, "--json", "--train.total-timesteps", "512", "--train.num-steps", "64",
        "--vec.num-envs", "2", "--train.device", "cpu", "--train.run-dir", str(run), cwd=tmp,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    return Path(json.loads(done.stdout.decode().splitlines()[-1])["checkpoint"])


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ck")
    names = ("ocean/cartpole", "classic_control/CartPole-v1", "ocean/bandit")
    return {name: checkpoint(tmp, name) for name in names}


def evaluate(ck: Path, name: str, *flags: str, cwd: Path) -> dict:
    done = puffer("eval", name, "--checkpoint", str(ck), "--episodes", "2", "--json", *flags, cwd=cwd)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout.decode().splitlines()[-1])


def one_error_line(done: subprocess.CompletedProcess) -> str:
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def assert_drawn(frames: np.ndarray, shape: tuple[int, ...]) -> None:
    assert frames.shape[1:] == shape and frames.dtype == np.uint8
    for i, frame in enumerate(frames):
        assert frame.min() != frame.max(), f"frame {i} is blank"


def test_native_ocean_episodes_to_mp4(checkpoints, tmp_path):
    result = evaluate(checkpoints["ocean/cartpole"], "ocean/cartpole", "--video", "out.mp4", cwd=tmp_path)
    frames = iio.imread(tmp_path / "out.mp4")
    assert result["video"] == "out.mp4" and result["episodes"] == 2
    assert len(frames) == result["frames"] == result["steps"]  # one a recv: the reset, then each step
    assert_drawn(frames, (200, 300, 3))  # the native cartpole's render() frame


def test_classic_control_episodes_to_gif(checkpoints, tmp_path):
    from PIL import Image

    name = "classic_control/CartPole-v1"
    result = evaluate(checkpoints[name], name, "--video", "sub/out.gif", cwd=tmp_path)
    frames = iio.imread(tmp_path / "sub" / "out.gif")
    assert_drawn(frames, (400, 600, 3))
    assert result["fps"] == 50  # gymnasium's render_fps for CartPole
    with Image.open(tmp_path / "sub" / "out.gif") as gif:  # Pillow merges repeated frames, longer
        durations = []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
    assert len(frames) <= result["frames"] and sum(durations) == result["frames"] * 20


def test_a_binding_without_frames_is_named(checkpoints, tmp_path):
    ck = checkpoints["ocean/bandit"]
    err = one_error_line(
        puffer("eval", "ocean/bandit", "--checkpoint", str(ck), "--video", "x.gif", cwd=tmp_path)
    )
    assert "puffer eval: error: ocean/bandit draws no frames" in err
    assert "ocean/cartpole" in err and "classic_control/*" in err and "--render" in err
    assert not (tmp_path / "x.gif").exists()


def test_render_prints_ansi_frames(checkpoints, tmp_path):
    result = evaluate(checkpoints["ocean/cartpole"], "ocean/cartpole", "--render", cwd=tmp_path)
    done = puffer(
        "eval", "ocean/cartpole", "--checkpoint", str(checkpoints["ocean/cartpole"]), "--episodes", "1",
        "--render", cwd=tmp_path,
    )  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0 and "\033[" in out and "step 0/500" in out and "step 1/500" in out
    assert result["frames"] == result["steps"]


def test_render_of_a_pixel_env_says_so(checkpoints, tmp_path):
    ck = checkpoints["classic_control/CartPole-v1"]
    err = one_error_line(
        puffer("eval", "classic_control/CartPole-v1", "--checkpoint", str(ck), "--render", cwd=tmp_path)
    )
    assert "classic_control/CartPole-v1 draws no text frames" in err and "--video out.gif" in err


def test_unknown_format_and_mp4_without_ffmpeg(checkpoints, tmp_path):
    ck = str(checkpoints["ocean/cartpole"])
    err = one_error_line(
        puffer("eval", "ocean/cartpole", "--checkpoint", ck, "--video", "x.avi", cwd=tmp_path)
    )
    assert "write .mp4 or .gif" in err
    no_ffmpeg = "import sys\nsys.modules['imageio_ffmpeg'] = None"  # as if imageio-ffmpeg were not installed
    env = {**ENV, "PATH": str(tmp_path)}  # and no ffmpeg on PATH
    done = puffer(
        "eval",
        "ocean/cartpole",
        "--checkpoint",
        ck,
        "--video",
        "x.mp4",
        cwd=tmp_path,
        prelude=no_ffmpeg,
        env=env,
    )
    err = one_error_line(done)
    assert "needs ffmpeg" in err and "--video out.gif" in err
    assert list(tmp_path.iterdir()) == []


def test_render_into_a_pipe_that_closes(checkpoints, tmp_path):
    """`puffer eval --render | head`: no BrokenPipeError once the reader has gone."""
    code = "import sys\nfrom pufferlib.cli import main\nsys.exit(main())"
    ck = str(checkpoints["ocean/cartpole"])
    argv = ["eval", "ocean/cartpole", "--checkpoint", ck, "--episodes", "2", "--render"]
    with subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout.readline()  # the first line of the first frame, then the reader goes
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.parametrize(
    ("name", "shape"),
    [("atari/breakout", (84, 84, 3)), ("procgen/coinrun", (64, 64, 3)), ("vizdoom/basic", (60, 80, 3))],
)
def test_pixel_bindings_draw_frames(name, shape, tmp_path):
    """Pixel observations (or a render() of them) are the frames, whichever the binding offers."""
    from pufferlib.environments import get
    from pufferlib.train import config
    from pufferlib.train.run import video

    binding = get(name)
    if not binding.available():
        pytest.skip(f"{name} needs {', '.join(binding.missing())}")
    env, raw = video.recording_env(binding, config.load(name, {}))
    try:
        recorder = video.Recorder(binding, raw)
        env.async_reset(0)
        for _ in range(4):
            env.recv()
            recorder()
            env.send(np.zeros_like(env.actions))
        path = recorder.save(tmp_path / "pixels.gif")
    finally:
        env.close()
    assert_drawn(np.stack(recorder.frames), shape)
    assert iio.imread(path).shape[1:] == shape
