"""The researcher's tools in the lib image, used as a researcher uses them: each one answers in a login shell
as the image's user, and `puffer eval --video out.mp4` records a real checkpoint's episode with the image's
ffmpeg (the static one install-lab.sh puts in the venv's bin; the image has no imageio-ffmpeg package),
decoded back into frames that are drawn (not blank)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.docker

TOOLS = (
    "git --version && tmux -V && htop --version && nvim --version && gcc --version && gdb --version"
    " && ffmpeg -version && less --version && curl --version && ssh -V && make --version"
)

# Frames of the mp4, decoded by the image's ffmpeg: how many, their size, and how many are one flat colour.
DECODE = r"""
import json, subprocess, sys
import numpy as np
w, h = 300, 200  # the native cartpole's render() frame
raw = subprocess.run(["ffmpeg", "-v", "error", "-i", sys.argv[1], "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                     check=True, capture_output=True).stdout
frames = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
print(json.dumps({"frames": len(frames), "blank": int(sum(f.min() == f.max() for f in frames))}))
"""

VIDEO = """set -e
cd /tmp
puffer train ocean/cartpole --json --train.total-timesteps 512 --train.num-steps 64 --vec.num-envs 2 \
  --train.device cpu --train.run-dir run | tail -n 1 >trained.json
ck=$(python -c 'import json; print(json.load(open("trained.json"))["checkpoint"])')
puffer eval ocean/cartpole --checkpoint "$ck" --episodes 1 --json --video out.mp4 | tail -n 1
python -c "$DECODE" out.mp4
"""


def test_the_tools_answer_in_a_login_shell(lib_container):
    result = lib_container.run_and_wait(["bash", "-lc", TOOLS], user="puffer", timeout=120)
    out = result.stdout + result.stderr  # ssh -V writes to stderr
    for marker in ("git version", "tmux ", "htop ", "NVIM v", "gcc (Debian", "GNU gdb", "ffmpeg version",
                   "less ", "curl ", "OpenSSH_", "GNU Make"):  # fmt: skip
        assert marker in out, f"{marker!r} missing from the tools' output:\n{out}"


def test_ffmpeg_is_the_pinned_static_build_in_the_venv(lib_container):
    """Not Debian's (docs/images.md: 228 MB with its codec libraries): the one lib.txt pins, read-only to
    the container's users but the venv's owner, with the H.264 encoder `puffer eval --video` uses."""
    probe = "command -v ffmpeg; stat -c '%a %U' \"$(command -v ffmpeg)\"; ffmpeg -hide_banner -encoders"
    result = lib_container.run_and_wait(["bash", "-lc", probe], user="puffer", timeout=60)
    where, mode, *encoders = result.stdout.splitlines()
    assert where == "/opt/venv/bin/ffmpeg" and mode == "755 puffer", result.stdout
    assert any("libx264" in line for line in encoders)
    assert (
        lib_container.run_and_wait(["dpkg", "-s", "ffmpeg"], expect=None).exit_code != 0
    )  # no Debian ffmpeg


def test_a_missing_tool_fails_the_same_check(lib_container):
    result = lib_container.run_and_wait(["bash", "-lc", "no-such-tool --version && " + TOOLS], expect=None)
    assert result.exit_code == 127 and "no-such-tool: command not found" in result.stderr


def test_eval_video_mp4_is_drawn_frames(lib_container):
    result = lib_container.run_and_wait(
        ["bash", "-lc", VIDEO], user="puffer", environment={"DECODE": DECODE}, timeout=300
    )
    evaluated, decoded = (json.loads(line) for line in result.stdout.strip().splitlines()[-2:])
    assert evaluated["video"] == "out.mp4" and evaluated["frames"] > 1, result
    assert decoded["frames"] == evaluated["frames"] and decoded["blank"] == 0, result
