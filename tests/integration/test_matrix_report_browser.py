"""The matrix report of a real run, in a real browser: headless Chromium (Debian's package, driven by
Playwright) renders it with no request leaving the file and no console error, and the failing plugin
binding's cell reads FAIL and leads to its output. The same run checks `puffertank matrix --json` (stdout
is the report and nothing else) and the provenance and JUnit that land beside the HTML."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pufferlib.matrix_protocol import CHECKS

pytestmark = pytest.mark.docker

PLUGIN = Path(__file__).parent / "plugins" / "failing_checks.py"
ENVS = ["test/bad-step", "ocean/bandit"]  # a binding with a real bug (its step check fails), one that passes


@pytest.fixture(scope="module")
def matrix_run(lib_image, tmp_path_factory):
    reports = tmp_path_factory.mktemp("report")
    puffertank = Path(sys.executable).with_name("puffertank")
    cmd = [str(puffertank), "matrix", "--variant", "cpu", "--image", lib_image, "--plugin", str(PLUGIN)]
    cmd += [arg for env in ENVS for arg in ("--env", env)]
    cmd += ["--jobs", "2", "--report", str(reports), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the broken binding fails the run
    return reports, proc


def test_json_on_stdout_is_the_report(matrix_run):
    reports, proc = matrix_run
    printed = json.loads(proc.stdout)  # nothing else on stdout: progress went to stderr
    assert printed == json.loads((reports / "matrix.json").read_text())
    assert f"2 bindings x {len(CHECKS)} checks" in proc.stderr and "FAIL test/bad-step step" in proc.stderr
    prov = printed["provenance"]
    assert "--env test/bad-step --env ocean/bandit" in prov["command"] and "--json" in prov["command"]
    assert prov["run"]["filters"] == ENVS and prov["run"]["plugins"] == [PLUGIN.name]
    assert prov["machine"]["cpus"] >= 1 and prov["machine"]["cpu"]
    assert prov["pufferlib"]["git_revision"] and prov["engines"]["local"]["version"]


def test_junit_carries_hostname_errors_and_output(matrix_run):
    reports, _ = matrix_run
    suite = ET.parse(reports / "junit.xml").getroot()
    assert suite.get("hostname") and suite.get("errors") == "0" and suite.get("failures") == "1"
    passing = [c for c in suite.iter("testcase") if c.find("failure") is None and c.find("skipped") is None]
    assert passing and all(c.find("system-out") is not None for c in passing)


def test_the_report_in_chromium(matrix_run, watched_page, tmp_path):
    reports, _ = matrix_run
    watched = watched_page((reports / "matrix.html").as_uri())
    page, requests, errors = watched.page, watched.requests, watched.errors
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000

    assert [url for url in requests if not url.startswith("file://")] == []  # nothing fetched from anywhere
    assert errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # fits 1280 px

    row = page.locator("tr", has=page.locator("th.env", has_text="test/bad-step"))
    failed = row.locator('td[data-status="fail"]')
    assert failed.count() == 1 and failed.inner_text().startswith("FAIL")
    assert "/s" not in failed.inner_text()
    failed.locator("a").click()
    target = page.locator("details:target")
    assert target.count() == 1 and "test/bad-step / step" in target.inner_text()
    assert "observation outside" in target.inner_text()

    # skip reasons are on the page, not in a tooltip
    assert page.get_by_text("no CUDA GPU visible to torch").first.is_visible()
    header = page.locator("thead th", has_text="step")
    assert header.evaluate("th => getComputedStyle(th).position") == "sticky"
    assert "1/2" in header.inner_text()  # per-check totals: 1 of 2 bindings passed step
