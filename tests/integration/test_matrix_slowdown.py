"""`puffertank matrix --baseline` against a real rerun and a planted slowdown, on the real engine: a plugin
binding (plugins/timed_step.py) run three times is the baseline (each timed cell keeps its 3 samples and
reports their median); the same binding rerun stays inside the
band (no regression, exit 0 under --fail-on regression); a copy whose step sleeps 5 ms is flagged
as a regression (exit 1, JUnit failure of type regression), and the report shows it in headless Chromium:
the grid cell is marked and the "since baseline" entry leads to it, with no request and no console error."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

PLUGIN = Path(__file__).parent / "plugins" / "timed_step.py"
PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]
TIMED = {"step", "serial", "multiprocessing", "learn"}


def matrix(image: str, plugin: Path, report: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [*PUFFERTANK, "matrix", "--image", image, "--plugin", str(plugin), "--env", "test/timed"]
    cmd += ["--repeats", "3", "--report", str(report), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def runs(lib_image, tmp_path_factory):
    """The baseline, a rerun of the same image against it, and the planted slowdown against it."""
    root = tmp_path_factory.mktemp("slowdown")
    slow = root / "slow" / PLUGIN.name
    slow.parent.mkdir()
    slow.write_text(PLUGIN.read_text().replace("DELAY_S = 0.0", "DELAY_S = 0.005"))
    base = matrix(lib_image, PLUGIN, root / "base")
    assert base.returncode == 0, base.stdout + base.stderr
    against = ["--baseline", str(root / "base"), "--fail-on", "regression"]
    again = matrix(lib_image, PLUGIN, root / "again", *against)
    slower = matrix(lib_image, slow, root / "slower", *against)
    return root, again, slower


def comparison(report: Path) -> dict:
    return json.loads((report / "matrix.json").read_text())["comparison"]


def test_repeats_keep_every_sample_and_report_the_median(runs):
    root, _, _ = runs
    report = json.loads((root / "base" / "matrix.json").read_text())
    assert report["provenance"]["run"]["repeats"] == 3
    timed = {r["check"]: r for r in report["rows"] if r["check"] in TIMED and r["status"] == "pass"}
    assert {"step", "serial"} <= set(timed), report["rows"]
    for row in timed.values():
        assert len(row["samples"]) == 3 and sorted(row["samples"])[1] == pytest.approx(row["sps"]), row


def test_a_rerun_stays_inside_the_noise_band(runs):
    root, again, _ = runs
    assert again.returncode == 0, again.stdout + again.stderr
    result = comparison(root / "again")
    assert result["counts"]["regression"] == 0 and result["counts"]["new-failure"] == 0, result["changes"]


def test_a_planted_slowdown_is_a_regression(runs):
    root, _, slower = runs
    assert slower.returncode == 1, slower.stdout + slower.stderr
    result = comparison(root / "slower")
    step = next(c for c in result["changes"] if c["check"] == "step")
    assert step["kind"] == "regression" and step["ratio"] < 0.5 and step["band"] < 0.5, step
    suite = ET.parse(root / "slower" / "junit.xml").getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    case = cases["test/timed", "step"]
    assert case.find("failure") is not None and case.find("failure").get("type") == "regression"


def test_the_regression_in_chromium(runs, watched_page):
    root, _, _ = runs
    watched = watched_page((root / "slower" / "matrix.html").as_uri())
    page = watched.page
    assert [url for url in watched.requests if not url.startswith("file://")] == [] and watched.errors == []
    # the headline says what the exit status says: 0 cells failed, yet the run failed --fail-on regression
    verdict = page.locator("p.verdict")
    assert verdict.inner_text().startswith("FAILED under --fail-on regression: 0 failed"), (
        verdict.inner_text()
    )
    again = watched_page((root / "again" / "matrix.html").as_uri()).page.locator("p.verdict").inner_text()
    assert again.startswith("PASSED under --fail-on regression"), again
    entry = page.locator('#since ~ ul li[data-kind="regression"]', has_text="test/timed step")
    assert entry.count() == 1 and "band: worse by more than" in entry.inner_text()
    entry.locator("a").click()
    target = page.locator("td:target")
    assert target.count() == 1 and target.get_attribute("data-change") == "regression"
    assert "▼" in target.inner_text()
    assert target.evaluate("td => getComputedStyle(td).outlineStyle") == "solid"
