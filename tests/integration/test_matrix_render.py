"""The matrix's `render` cells in the image: pixel bindings pass, blank or misshapen frames fail."""

from pathlib import Path

import pytest

from pufferlib.tank.matrix import Host, Plan, registered_bindings, run_matrix, select

pytestmark = pytest.mark.docker
PLUGIN = Path(__file__).parent / "plugins" / "render_frames.py"


@pytest.fixture(scope="module")
def render_cells(docker_client, lib_image):
    host = Host("local", docker_client)
    plan = Plan(image=lib_image, variant="cpu", hosts=[host], bindings=[], jobs=2, plugins=[PLUGIN])
    listed = registered_bindings(host, plan)
    plan.bindings = select(listed, ["test/*frame*", "dm_control/cartpole-swingup-pixels"])
    report = run_matrix(plan)
    return {row.env: row for row in report.rows if row.check == "render"}


def test_blank_and_misshapen_frames_fail(render_cells):
    assert render_cells["test/blank-frames"].status == "fail"
    assert "one flat value" in render_cells["test/blank-frames"].detail
    assert render_cells["test/wrong-frame"].status == "fail"
    assert render_cells["test/frames"].status == "pass"


def test_frames_in_a_dict_observation_are_found(render_cells):
    cell = render_cells["test/dict-frames"]  # a frame field beside a number, as ViZDoom's screen
    assert cell.status == "pass", cell.detail
    assert "the `screen` field" in cell.detail


def test_dm_control_pixels_render_headless_and_say_how(render_cells):
    cell = render_cells["dm_control/cartpole-swingup-pixels"]
    assert cell.status == "pass", cell.detail
    assert "MUJOCO_GL=egl" in cell.detail and "llvmpipe" in cell.detail  # Mesa's software EGL, no GPU


def test_the_report_shows_the_frames_as_a_thumbnail_strip(render_cells, tmp_path):
    """dm_control's pixels come back as PNG thumbnails that are not blank, and the HTML shows them."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    from pufferlib.tank.matrix.report import Report, render_html

    cell = render_cells["dm_control/cartpole-swingup-pixels"]
    assert len(cell.images) == 5, cell
    frames = [np.asarray(Image.open(io.BytesIO(base64.b64decode(i)))) for i in cell.images]
    assert all(f.ndim == 3 and f.shape[2] == 3 and f.std() > 1 for f in frames)  # drawn, in colour
    page = render_html(Report(image="i", digest="d", variant="cpu", rows=[cell]))
    assert 'id="frames-dm-control-cartpole-swingup-pixels"' in page and page.count("data:image/png") == 5
    assert render_cells["test/blank-frames"].images == []
