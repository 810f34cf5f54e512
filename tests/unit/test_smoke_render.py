"""The smoke `render` check: passes on drawn frames of the declared shape, fails on blank or misshapen
ones, skips bindings without pixels (the plugin bindings of tests/integration/plugins/render_frames.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from pufferlib.smoke import Smoke

PLUGIN = Path(__file__).parents[1] / "integration" / "plugins" / "render_frames.py"
CHECKS = ("import", "make", "spaces", "reset", "render")


@pytest.fixture(scope="module", autouse=True)
def plugin():
    name = "puffertank_test_render_frames"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PLUGIN)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # registers test/frames, test/blank-frames, test/wrong-frame
    return sys.modules[name]


def render(name):
    results = {r.check: r for r in Smoke(name).run(CHECKS)}
    assert results["reset"].status == "pass", results["reset"].detail
    return results["render"]


def test_drawn_frames_pass_and_name_the_renderer():
    result = render("test/frames")
    assert result.status == "pass", result.detail
    assert "(16, 16, 3)" in result.detail and "numpy random frames" in result.detail


def test_blank_frames_fail():
    result = render("test/blank-frames")
    assert result.status == "fail" and "one flat value 7" in result.detail


def test_frames_of_another_shape_fail():
    result = render("test/wrong-frame")
    assert result.status == "fail" and "declares pixels (16, 16, 3)" in result.detail


def test_bindings_without_pixels_skip_with_the_reason():
    result = render("ocean/squared")
    assert result.status == "skip" and "no pixel observations" in result.detail
