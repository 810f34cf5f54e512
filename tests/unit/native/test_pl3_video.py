"""PufferLib 3.0's envs recorded: their c_render draws into a raylib window, which `puffer eval --video`
reads back from a private Xvfb (pufferlib/ocean/contracts/screen.py), with the sprites the catalog keeps.

Run as a user runs it: a real training update makes the checkpoint, `puffer eval` (a subprocess, no
DISPLAY) records it, the GIF is decoded back. And where no frame can be drawn, the error says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _repo import REPO
from _strict import skip_or_fail

from pufferlib.ocean.contracts import screen

iio = pytest.importorskip("imageio.v3")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def home() -> Path:
    home = os.environ.get("PUFFERTANK_TEST_PL3_HOME")
    if not home:
        skip_or_fail("PUFFERTANK_TEST_PL3_HOME is unset: tests/run.sh builds the catalog and sets it")
    if screen.xvfb() is None:
        skip_or_fail("no Xvfb: apt-get install xvfb (tests/run.sh installs it)")
    return Path(home)


def puffer(*argv: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(
        PUFFER_PL3_HOME=str(home),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def xvfb_servers() -> set[int]:
    out = subprocess.run(["pgrep", "-x", "Xvfb"], capture_output=True, text=True).stdout
    return {int(pid) for pid in out.split()}


def test_eval_records_a_catalog_env_drawn_by_its_c_render(home, tmp_path):
    name = "pufferlib3/cartpole"
    run = tmp_path / "run"
    trained = puffer(
        "train", name, "--json", "--train.total-timesteps", "512", "--train.num-steps", "64",
        "--vec.num-envs", "2", "--rnn.enabled", "false", "--train.device", "cpu", "--train.run-dir", str(run),
        cwd=tmp_path, home=home,
    )  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    ck = json.loads(trained.stdout.splitlines()[-1])["checkpoint"]
    before = xvfb_servers()
    done = puffer(
        "eval",
        name,
        "--checkpoint",
        ck,
        "--episodes",
        "2",
        "--json",
        "--video",
        "out.gif",
        cwd=tmp_path,
        home=home,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    frames = iio.imread(tmp_path / "out.gif")
    assert result["episodes"] == 2 and result["frames"] == result["steps"] > 2
    height, width = frames.shape[1:3]
    assert frames.dtype == np.uint8 and frames.shape[3] == 3 and 200 <= width < 1920 and 200 <= height < 1080
    assert all(frame.min() != frame.max() for frame in frames), "a blank frame"
    assert len({frame.tobytes() for frame in frames}) > 1, "every frame the same: the pole never moved"
    assert "INFO:" not in done.stdout, "raylib's log reached stdout"
    assert xvfb_servers() <= before, "the recording's Xvfb outlived it"


SPRITE_RUN = """
import json, os
import numpy as np
from pufferlib.ocean.contracts import load
from pathlib import Path
env = load.make("breakout", root=Path(os.environ["PUFFER_PL3_HOME"]), render_mode="rgb_array")
env.reset(seed=1)
frames = [env.render()]
for _ in range(3):
    env.step(np.zeros(env.actions.shape, env.actions.dtype))
    frames.append(env.render())
env.close()
colours = len(np.unique(frames[-1].reshape(-1, 3), axis=0))
print(json.dumps({"shape": frames[-1].shape, "colours": colours, "cwd": os.getcwd()}))
"""


def test_a_catalog_sprite_is_drawn_from_the_kept_resources(home, tmp_path):
    """breakout's ball is the sdist's resources/shared/puffers_128.png: the catalog keeps it and the draw
    runs where raylib finds it; drawn from elsewhere, the frame lacks the sprite's shades."""
    assert (home / "resources" / "shared" / "puffers_128.png").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(PUFFER_PL3_HOME=str(home), PYTHONPATH=str(REPO))
    bare = tmp_path / "bare"  # the catalog's breakout without its resources/
    bare.mkdir()
    (bare / "breakout").symlink_to(home / "breakout")
    got = {}
    for how, root in (("with", home), ("without", bare)):
        env["PUFFER_PL3_HOME"] = str(root)
        done = subprocess.run(
            [sys.executable, "-c", SPRITE_RUN],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        got[how] = json.loads(done.stdout.splitlines()[-1])
    assert got["with"]["cwd"] == str(tmp_path)  # the draw's working directory was put back
    assert got["with"]["shape"] == got["without"]["shape"]
    assert got["with"]["colours"] > got["without"]["colours"] + 10, got


def test_without_xvfb_the_error_says_what_to_install(home, tmp_path, monkeypatch):
    monkeypatch.setattr(screen, "XVFB", (str(tmp_path / "no-such-Xvfb"),))
    with pytest.raises(screen.ScreenError, match="apt-get install xvfb"):
        screen.Screen("Breakout")


def test_an_xvfb_that_cannot_start_is_named_with_its_own_error(monkeypatch):
    """Xvfb's fatal error (its log goes to a file while it runs, read back here) is the message."""
    monkeypatch.setattr(screen, "SCREEN", "1x1x7")  # no such depth: Xvfb exits at start
    with pytest.raises(screen.ScreenError, match=r"Xvfb did not start: Couldn't add screen 0$"):
        screen.Screen("pong")
