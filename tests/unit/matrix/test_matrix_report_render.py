"""The matrix report's rendering rules, on a report made of cells like a real run's (the real run, in a
real browser, is tests/integration/test_matrix_report_browser.py): FAIL in words with a link and no
steps/s, skip reasons on the page, per-check totals, a host per binding on several hosts, and JUnit's
hostname, errors and system-out."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from pufferlib.provenance import machine
from pufferlib.tank.matrix.report import Cell, Report, load, render_html, write_all

GPU = "no CUDA GPU visible to torch: torch 2.13.0+cpu has no CUDA build"


def report(hosts=("local",)) -> Report:
    rows = []
    for i, env in enumerate(("ocean/squared", "test/bad-step", "test/hangs")):
        host = hosts[i % len(hosts)]
        rows.append(Cell(env, "make", "pass", 0.2, "made", None, host))
        if env == "test/bad-step":
            rows.append(Cell(env, "step", "fail", 0.4, "AssertionError: observation outside", 5e4, host))
            rows.append(Cell(env, "learn", "skip", 0.0, "step failed", None, host))
        elif env == "test/hangs":
            detail = "timed out after 60s (binding hung?)"
            rows.append(Cell(env, "step", "fail", 0.0, detail, None, host, error=True))
            rows.append(Cell(env, "learn", "fail", 0.0, detail, None, host, error=True))
        else:
            rows.append(Cell(env, "step", "pass", 0.4, "", 12345.0, host))
            rows.append(Cell(env, "learn", "pass", 3.0, "solved", 8000.0, host))
        rows.append(Cell(env, "gpu", "skip", 0.0, GPU, None, host))
    prov = {"command": "puffertank matrix --env 'test/*'", "machine": machine(), "run": {"jobs": 2}}
    digest = "sha256:" + "0" * 64
    return Report("puffertank/lib:cpu", digest, "cpu", hosts=list(hosts), rows=rows, provenance=prov)


def test_failures_read_fail_and_link_to_their_output():
    page = render_html(report())
    cells = re.findall(r'<td class="cell" data-status="fail"[^>]*>(.*?)</td>', page)
    assert len(cells) == 3
    for cell in cells:
        assert ">FAIL</a>" in cell and "/s<" not in cell  # no steps/s on a failed cell (5e4 above is hidden)
        target = re.search(r'href="#([^"]+)"', cell).group(1)
        assert f'<details id="{target}"' in page
    assert "test/hangs / step (did not report)" in page
    ids = re.findall(r'id="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_skip_reasons_are_on_the_page():
    page = render_html(report())
    assert GPU in page and "title=" not in page.split('<table class="grid">')[1].split("skip")[0]
    gpu_header = re.search(r'<th scope="col">gpu(.*?)</th>', page).group(1)
    assert re.search(r'href="#note-\d+"', gpu_header)  # one reason covers the column: a note on it
    note = re.search(r'<li id="note-(\d+)"><b>\[\d+\]</b> step failed', page).group(1)
    learn_header = re.search(r'<th scope="col">learn(.*?)</th>', page).group(1)
    assert f'href="#note-{note}"' in learn_header  # learn's only skip reason
    assert "skipped: gpu 3 (every skip)" in page


def test_totals_per_check():
    page = render_html(report())
    step = re.search(r'<th scope="col">step(.*?)</th>', page).group(1)
    assert "1/3" in step and "2 FAIL" in step
    assert "FAILED: 3 failed, 5 passed, 4 skipped of 12 cells" in " ".join(page.split())


def test_several_hosts_show_who_ran_what():
    one = render_html(report())
    assert '<th class="host">' not in one
    two = render_html(report(hosts=("local", "ssh://puffer@box2")))
    assert '<th class="host">host</th>' in two
    row = re.search(r"test/bad-step</th>(.*?)</tr>", two).group(1)
    assert "ssh://puffer@box2" in row


def test_junit_and_json(tmp_path):
    made = report()
    why = "the Docker engine on local failed: APIError: 500 failed to start shim"
    made.rows.append(Cell("test/no-engine", "make", "engine-error", 0.0, why, None, "local", error=True))
    paths = write_all(made, tmp_path)
    suite = ET.parse(paths["junit"]).getroot()
    assert suite.get("hostname") == machine()["hostname"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "13", "3", "1", "4",
    )  # fmt: skip
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    passing = cases["ocean/squared", "learn"]
    assert "solved" in passing.find("system-out").text and "steps/s: 8,000" in passing.find("system-out").text
    assert cases["test/hangs", "step"].find("failure") is not None  # a hung env is the env's failure
    engine = cases["test/no-engine", "make"].find("error")  # a cell the engine could not run is an error
    assert engine is not None and engine.get("type") == "engine-error"
    assert cases["test/bad-step", "step"].find("failure") is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["provenance.command"] == "puffertank matrix --env 'test/*'"
    assert load(paths["json"]).provenance == made.provenance and load(paths["json"]).rows == made.rows
