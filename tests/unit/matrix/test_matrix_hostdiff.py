"""--every-host's comparison of boxes, on a real run's matrix.json (data/matrix-ocean.json) laid
onto two hosts here: the same cells on both differ in nothing; a planted failure, renderer, frame and
10x slowdown on the second are each flagged, and the report, JUnit, the baseline comparison and the
history keep the two hosts' cells apart."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from pufferlib.tank.matrix.baseline import compare
from pufferlib.tank.matrix.history import load_series
from pufferlib.tank.matrix.hostdiff import differences, renderer
from pufferlib.tank.matrix.report import Cell, Report, load, render_html, write_all
from pufferlib.tank.matrix.schema import READS, SCHEMA, load_document

FIXTURE = Path(__file__).parent / "data" / "matrix-ocean.json"
A, B = "local", "ssh://puffer@box2"
RENDER = "5 frames (16, 16, 3) uint8, none blank; rendered by {}"


def two_hosts() -> Report:
    """The fixture's run as if --every-host had run it on A and B (B's cells: copies of A's)."""
    report = load(FIXTURE)
    report.hosts, report.every_host = [A, B], True
    rows = []
    for row in report.rows:
        row.host = A
        rows += [row, copy.deepcopy(row)]
        rows[-1].host = B
    frames = [
        Cell("test/frames", "render", "pass", 0.5, RENDER.format("llvmpipe"), images=["aaaa"], host=h)
        for h in (A, B)
    ]
    report.rows = rows + frames
    report.host_seconds = {h: dict(report.env_seconds) for h in (A, B)}
    return report


def on(report: Report, env: str, check: str, host: str) -> Cell:
    return next(r for r in report.rows if (r.env, r.check, r.host) == (env, check, host))


def diff(report: Report, seeding: str = "full") -> dict[tuple[str, str], dict]:
    seeds = {r.env: seeding for r in report.rows}
    return {(d["env"], d["check"]): d for d in differences(report.rows, report.hosts, seeds)}


def test_the_same_cells_on_two_hosts_differ_in_nothing():
    assert diff(two_hosts()) == {}


def test_a_failure_a_renderer_frames_and_a_slowdown_on_one_box_are_flagged():
    report = two_hosts()
    step = on(report, "ocean/squared", "step", B)
    step.status, step.sps, step.samples = "fail", None, []
    serial = on(report, "ocean/cartpole", "serial", B)
    serial.samples = [s / 10 for s in on(report, "ocean/cartpole", "serial", A).samples or [serial.sps]]
    serial.sps = serial.samples[0]
    render = on(report, "test/frames", "render", B)
    found = diff(report)
    assert found[("ocean/squared", "step")]["kind"] == "status"
    assert found[("ocean/squared", "step")]["values"] == ["pass", "fail"]
    speed = found[("ocean/cartpole", "serial")]
    assert speed["kind"] == "speed" and speed["ratio"] > 9 and speed["hosts"] == [A, B]
    render.images = ["bbbb"]
    assert diff(report)[("test/frames", "render")]["kind"] == "frames"
    assert ("test/frames", "render") not in diff(report, seeding="not seeded: frames vary")  # only "full"
    render.detail = RENDER.format("EGL on NVIDIA GeForce RTX 4090")
    assert renderer(render) == "EGL on NVIDIA GeForce RTX 4090"
    assert diff(report)[("test/frames", "render")]["kind"] == "renderer"
    assert next(iter(diff(report))) == ("ocean/squared", "step"), "the worst kind first"


def test_the_report_keeps_each_hosts_cells_apart(tmp_path):
    report = two_hosts()
    on(report, "ocean/squared", "step", B).status = "fail"
    seeds = {r.env: "full" for r in report.rows}
    report.host_differences = differences(report.rows, report.hosts, seeds)
    paths = write_all(report, tmp_path)
    page = paths["html"].read_text()
    ids, links = Anchors.of(page)
    assert len(ids) == len(set(ids)), "an id per host's cell"
    assert {link for link in links if link} <= set(ids), "every link lands"
    assert page.count('class="hostgroup"') == 2 and "Differs between hosts" in page
    assert f'href="#cell-ocean-squared-step-{B.replace(":", "-").replace("/", "-").replace("@", "-")}' in page
    suite = ET.parse(paths["junit"]).getroot()
    names = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
    assert len(names) == len(set(names)) and ("ocean/squared", f"step @ {B}") in names
    doc = json.loads(paths["json"].read_text())
    assert doc["schema"] == SCHEMA and doc["every_host"] and doc["host_differences"][0]["kind"] == "status"
    assert load(paths["json"]).host_differences == report.host_differences


def test_two_slow_repeats_on_one_box_are_not_a_speed_difference():
    """Each box's fastest repeat is its figure, as for --baseline: a CI rerun's multiprocessing samples
    (two of three at half speed: median x0.57, fastest x1.16) are no difference, every repeat 3x slower is."""
    report = two_hosts()
    a = on(report, "ocean/cartpole", "multiprocessing", A)
    b = on(report, "ocean/cartpole", "multiprocessing", B)
    a.samples, b.samples = [18500.0, 19000.0, 15800.0], [22100.0, 10100.0, 10600.0]
    a.sps = b.sps = None
    assert ("ocean/cartpole", "multiprocessing") not in diff(report)
    b.samples = [s / 3 for s in a.samples]
    speed = diff(report)[("ocean/cartpole", "multiprocessing")]
    assert speed["values"] == [19000, 6333] and speed["ratio"] == 3.0, speed


def test_a_baseline_compares_each_hosts_cell():
    report = two_hosts()
    base = json.loads(FIXTURE.read_text())  # a one-host run
    slow = on(report, "ocean/squared", "step", B)
    slow.sps, slow.samples = slow.sps / 10, [s / 10 for s in slow.samples]
    comparison = compare(report.to_json(), base)
    kinds = [(c["kind"], c["env"], c["check"], c["host"]) for c in comparison["changes"]]
    assert [k for k in kinds if k[0] == "regression"] == [("regression", "ocean/squared", "step", B)], kinds
    report.comparison = comparison
    page = render_html(report)
    assert "ocean/squared step on ssh://puffer@box2" in page
    ids, links = Anchors.of(page)
    assert {link for link in links if link} <= set(ids)


def test_the_history_keeps_a_line_per_host(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "matrix.json").write_text(json.dumps(two_hosts().to_json()))
    columns = load_series([tmp_path / "a", FIXTURE])
    envs = {env for c in columns for env, _ in c.rows}
    assert f"ocean/squared @ {B}" in envs and f"ocean/squared @ {A}" in envs and "ocean/squared" in envs


def test_schema_2_files_still_read(tmp_path):
    assert json.loads(FIXTURE.read_text())["schema"] == 2 and 2 in READS
    assert load_document(FIXTURE, "--baseline")["rows"]
    assert load(FIXTURE).every_host is False


class Anchors(HTMLParser):
    """Every id on a page and every in-page link's target."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and (attrs.get("href") or "").startswith("#"):
            self.links.append(attrs["href"][1:])

    @classmethod
    def of(cls, page: str) -> tuple[list[str], list[str]]:
        parser = cls()
        parser.feed(page)
        return parser.ids, parser.links
