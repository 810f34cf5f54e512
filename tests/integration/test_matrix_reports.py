"""matrix.json, JUnit XML and the HTML grid, written from a real (small) matrix run."""

import json
import xml.etree.ElementTree as ET

import pytest

from pufferlib.matrix_protocol import CHECKS
from pufferlib.tank.matrix import Host, Plan, registered_bindings, run_matrix, select
from pufferlib.tank.matrix.report import load, write_all

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def written(docker_client, lib_image, tmp_path_factory):
    host = Host("local", docker_client)
    plan = Plan(image=lib_image, variant="cpu", hosts=[host], bindings=[], jobs=2)
    plan.bindings = select(registered_bindings(host, plan), ["ocean/spaces", "ocean/multiagent"])
    report = run_matrix(plan)
    return report, write_all(report, tmp_path_factory.mktemp("report"))


def test_json_rows_and_metadata(written):
    report, paths = written
    data = json.loads(paths["json"].read_text())
    assert data["image"] and data["digest"].startswith("sha256:")
    assert data["versions"]["python"].startswith("3.11") and "torch" in data["versions"]
    assert data["wall_seconds"] > 0 and set(data["env_seconds"]) == {"ocean/spaces", "ocean/multiagent"}
    assert len(data["rows"]) == 2 * len(CHECKS)  # one cell per check of smoke.CHECKS
    for row in data["rows"]:
        assert {"env", "check", "status", "seconds", "detail"} <= row.keys()
        assert row["status"] in ("pass", "fail", "skip")
    assert load(paths["json"]).rows == report.rows


def test_junit(written):
    report, paths = written
    suite = ET.parse(paths["junit"]).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(report.rows)
    cases = suite.findall("testcase")
    assert {c.get("classname") for c in cases} == {"ocean/spaces", "ocean/multiagent"}
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == report.counts()["skip"]


def test_html_grid(written):
    report, paths = written
    page = paths["html"].read_text()
    assert (
        page.startswith("<!doctype html>") and "<script" not in page and "http" not in page.split("<body>")[1]
    )
    assert page.count('<td class="cell"') == len(report.rows)
    assert "ocean/multiagent" in page and "multiprocessing" in page
