"""The smoke `render` check: passes on drawn frames of the declared shape, fails on blank or misshapen ones,
skips bindings without pixels. The bindings come from tests/integration/plugins/render_frames.py, loaded the
way `puffertank matrix --plugin` loads them (PUFFERLIB_PLUGINS), in a child process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGINS = Path(__file__).parents[2] / "integration" / "plugins"


@pytest.fixture(scope="module")
def render():
    def run(name: str, **environment: str) -> dict:
        env = {k: v for k, v in os.environ.items() if k != "PUFFERTANK_GPU_REQUESTED"}
        env.update(
            PUFFERLIB_PLUGINS="render_frames",
            PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])),
            **environment,
        )
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "pufferlib.smoke",
                name,
                "--json",
                "--checks",
                "import,make,spaces,reset,render",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        results = {r["check"]: r for r in map(json.loads, out.stdout.splitlines())}
        assert results["reset"]["status"] == "pass", out.stdout + out.stderr
        return results["render"]

    return run


def test_drawn_frames_pass_and_name_the_renderer(render):
    result = render("test/frames")
    assert result["status"] == "pass", result["detail"]
    assert "(16, 16, 3)" in result["detail"] and "numpy random frames" in result["detail"]


def test_drawn_frames_come_back_as_thumbnails(render):
    """The report's thumbnail strip: one small PNG per step of the check, decoded back and not blank."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    result = render("test/frames")
    assert len(result["images"]) == 5, result.keys()
    for encoded in result["images"]:
        image = Image.open(io.BytesIO(base64.b64decode(encoded)))
        assert image.format == "PNG" and image.size == (16, 16) and image.mode == "RGB"
        pixels = np.asarray(image)
        assert pixels.min() < pixels.max()  # drawn, not one flat value
    assert render("test/blank-frames").get("images") == []  # a failed check carries none


def test_blank_frames_fail(render):
    result = render("test/blank-frames")
    assert result["status"] == "fail" and "one flat value 7" in result["detail"]


def test_frames_of_another_shape_fail(render):
    result = render("test/wrong-frame")
    assert result["status"] == "fail" and "declares pixels (16, 16, 3)" in result["detail"]


def test_bindings_without_pixels_skip_with_the_reason(render):
    result = render("ocean/squared")
    assert result["status"] == "skip" and "no pixel observations" in result["detail"]


def test_frames_in_a_dict_observation_are_found_by_their_shape(render):
    result = render("test/dict-frames")
    assert result["status"] == "pass", result["detail"]
    assert "the `screen` field" in result["detail"]


def test_a_gpu_request_fails_render_where_egl_cannot_reach_an_nvidia_gpu(render):
    """Where the host asked for GPUs, frames alone are not enough: EGL must render on the NVIDIA driver.
    Here (no NVIDIA EGL driver, GPU or not) that is red and says what EGL found, never a skip."""
    result = render("test/frames", PUFFERTANK_GPU_REQUESTED="--gpus all on test")
    assert result["status"] == "fail", result["detail"]
    detail = result["detail"]
    assert "a GPU was requested (--gpus all on test) but EGL does not render on it" in detail, detail
    assert "NVIDIA_DRIVER_CAPABILITIES=" in detail and "10_nvidia.json" in detail, detail


def test_an_env_whose_render_draws_passes_with_changing_frames(render):
    result = render("test/drawn")
    assert result["status"] == "pass", result["detail"]
    assert "5 frames (12, 20, 3) drawn by render() (render_mode rgb_array)" in result["detail"]
    assert len(result["images"]) == 5


@pytest.mark.parametrize(
    ("name", "why"),
    [("test/blank-drawn", "render() 0 is one flat value 9"), ("test/still-drawn", "drew the same frame")],
)
def test_a_render_that_draws_nothing_or_never_changes_fails(render, name, why):
    result = render(name)
    assert result["status"] == "fail" and why in result["detail"], result["detail"]
