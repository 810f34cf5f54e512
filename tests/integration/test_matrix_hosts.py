"""`--host`: bindings spread over two Docker daemons, the second one reached over TLS, and the report says
which ran what; `--every-host`: every binding on both, and what differs between the two boxes.

The second daemon (_daemons.py) runs on this machine as a remote box would be set up, reached over TLS;
the lib image is copied in over its unix socket. It also sets `--dns` to plugins/host_dependent.py's MARK:
a box configured differently, which that plugin's bindings notice (one fails its step there, the other
draws different frames).
"""

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

docker = pytest.importorskip("docker")

from _daemons import make_certificates, second_dockerd  # noqa: E402

from pufferlib.matrix_protocol import CHECKS  # noqa: E402
from pufferlib.tank.engine import TlsOptions  # noqa: E402
from pufferlib.tank.errors import TankError  # noqa: E402
from pufferlib.tank.matrix import LABEL, Host, Plan, registered_bindings, run_matrix, select  # noqa: E402

pytestmark = pytest.mark.docker

PLUGIN = Path(__file__).parent / "plugins" / "host_dependent.py"
HOST_MARK = "10.213.0.53"  # plugins/host_dependent.py's MARK
PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]
# spread over the two hosts: six quick Ocean bindings (the full matrix is test_matrix_cells.py's; all 18
# Ocean bindings here cost ~45 s more and showed nothing six do not)
SPREAD = ["ocean/bandit", "ocean/breakout", "ocean/pong"]
SPREAD += ["ocean/squared", "ocean/squared_pl3", "ocean/performance"]


@pytest.fixture(scope="module")
def second_daemon(docker_client, lib_image):
    with second_dockerd("--dns", HOST_MARK) as daemon:
        start = time.monotonic()
        save = subprocess.Popen(["docker", "save", lib_image], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "-H", daemon.unix, "load", "-q"], stdin=save.stdout, check=True, capture_output=True
        )
        save.wait(timeout=600)
        print(
            f"\nsecond daemon at {daemon.unix} and {daemon.tcp}; {lib_image} copied in "
            f"{time.monotonic() - start:.0f}s"
        )
        yield daemon


@pytest.fixture(scope="module")
def two_host_report(docker_client, lib_image, second_daemon):
    hosts = [Host("local", docker_client), Host.connect(second_daemon.tcp, second_daemon.tls())]
    plan = Plan(image=lib_image, variant="cpu", hosts=hosts, bindings=[], jobs=1)
    plan.bindings = select(registered_bindings(hosts[0], plan), SPREAD)
    return plan, run_matrix(plan)


def test_bindings_spread_over_both_hosts(two_host_report, second_daemon):
    _, report = two_host_report
    assert report.hosts == ["local", second_daemon.tcp]
    by_env = {}
    for row in report.rows:
        by_env.setdefault(row.env, set()).add(row.host)
    assert all(len(hosts) == 1 for hosts in by_env.values()), "one binding, one host"
    assert set().union(*by_env.values()) == {"local", second_daemon.tcp}


def test_every_cell_ran(two_host_report):
    plan, report = two_host_report
    failed = [f"{r.env}/{r.check} on {r.host}: {r.detail[:200]}" for r in report.rows if r.status == "fail"]
    assert not failed, "\n".join(failed)
    assert len(report.rows) == len(plan.bindings) * len(CHECKS)  # one cell per check of smoke.CHECKS


def test_no_container_left_on_either_host(two_host_report):
    plan, _ = two_host_report
    for host in plan.hosts:
        assert host.client.containers.list(all=True, filters={"label": f"{LABEL}={plan.run_id}"}) == []


def test_tls_from_the_environment_as_the_docker_cli_reads_it(second_daemon, tmp_path):
    """DOCKER_HOST + DOCKER_TLS_VERIFY + DOCKER_CERT_PATH, as `docker` itself takes them."""
    env = {
        **os.environ,
        "DOCKER_HOST": second_daemon.tcp,
        "DOCKER_TLS_VERIFY": "1",
        "DOCKER_CERT_PATH": str(second_daemon.certs),
    }
    res = subprocess.run(
        [sys.executable, "-m", "pufferlib.tank.cli", "doctor", "--json", "--no-probe"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    docker_check = json.loads(res.stdout)["checks"][0]
    assert docker_check["status"] == "pass" and second_daemon.tcp in docker_check["detail"], docker_check


def test_a_daemon_certificate_from_another_ca_is_refused(second_daemon, tmp_path):
    make_certificates(tmp_path / "other", name="other ca")
    mine = second_daemon.certs
    stranger = TlsOptions.resolve(
        verify=True, cacert=tmp_path / "other" / "ca.pem", cert=mine / "cert.pem", key=mine / "key.pem"
    )
    with pytest.raises(TankError, match="cannot reach the Docker engine") as caught:
        Host.connect(second_daemon.tcp, stranger)
    assert "certificate" in caught.value.fix and "ca.pem" in caught.value.fix


def test_plain_http_to_a_tls_daemon_fails_even_when_allowed(second_daemon):
    with pytest.raises(TankError, match=f"cannot reach the Docker engine at {second_daemon.tcp}"):
        Host.connect(second_daemon.tcp, insecure=True)


@pytest.fixture(scope="module")
def every_host_run(lib_image, second_daemon, tmp_path_factory):
    """`puffertank matrix --every-host` as a user runs it, over this daemon and the TLS one: ocean/squared
    (the same on both boxes) and the two plugin bindings that notice the second box."""
    assert HOST_MARK in PLUGIN.read_text()
    reports = tmp_path_factory.mktemp("every-host")
    certs = second_daemon.certs
    tls = ["--tlsverify", "--tlscacert", str(certs / "ca.pem"), "--tlscert", str(certs / "cert.pem")]
    tls += ["--tlskey", str(certs / "key.pem")]
    cmd = [*PUFFERTANK, "matrix", "--image", lib_image, "--variant", "cpu", "--every-host", "--jobs", "1"]
    cmd += ["--host", "local", "--host", second_daemon.tcp, *tls, "--plugin", str(PLUGIN)]
    cmd += ["--env", "ocean/squared", "--env", "test/host-*", "--report", str(reports)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    return reports, done, json.loads((reports / "matrix.json").read_text())


def test_every_binding_ran_on_every_host(every_host_run, second_daemon):
    _, done, doc = every_host_run
    hosts = ["local", second_daemon.tcp]
    assert doc["every_host"] and doc["hosts"] == hosts
    # one image on both boxes (docker save/load keeps its id), checked before the run and recorded per host
    assert doc["digests"] == dict.fromkeys(hosts, doc["digest"]), doc["digests"]
    envs = {"ocean/squared", "test/host-step", "test/host-frames"}
    for env in envs:
        for host in hosts:
            cells = [r for r in doc["rows"] if r["env"] == env and r["host"] == host]
            assert len(cells) == len(CHECKS), (env, host, [c["check"] for c in cells])
        assert set(doc["host_seconds"][second_daemon.tcp]) == envs
    assert done.returncode == 1, done.stdout + done.stderr  # test/host-step fails on the second box


def test_what_differs_between_the_hosts_is_flagged(every_host_run, second_daemon):
    _, done, doc = every_host_run
    kinds = {(d["env"], d["check"]): d for d in doc["host_differences"]}
    step = kinds[("test/host-step", "step")]
    assert step["kind"] == "status" and step["values"] == ["pass", "fail"], step
    assert kinds[("test/host-frames", "render")]["kind"] == "frames"
    # the box-independent results of the same image are not flagged (speed may be: one box, two daemons)
    same = [d for d in doc["host_differences"] if d["env"] != "test/host-step" and d["kind"] != "speed"]
    assert [(d["env"], d["check"]) for d in same] == [("test/host-frames", "render")], same
    assert "differs between hosts:" in done.stdout and "STATUS test/host-step step" in done.stdout


def test_the_every_host_report_in_chromium(every_host_run, second_daemon, watched_page, tmp_path):
    reports, _, _ = every_host_run
    watched = watched_page((reports / "matrix.html").as_uri())
    page = watched.page
    page.screenshot(path=str(tmp_path / "every-host.png"), full_page=True)
    assert [url for url in watched.requests if not url.startswith("file://")] == [] and watched.errors == []
    groups = page.locator("th.hostgroup")
    assert groups.all_inner_texts() == ["local", second_daemon.tcp]
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids)), "every cell's anchor is unique across hosts"
    row = page.locator("tr", has=page.locator("th.env", has_text="test/host-step"))
    assert (
        row.locator('td[data-status="fail"]').count() >= 1 and row.locator('td[data-status="pass"]').count()
    )
    row.locator("td.differs a", has_text="step").click()
    entry = page.locator("li:target")
    assert entry.count() == 1 and "status differs" in entry.inner_text()
    entry.locator("a", has_text=second_daemon.tcp).click()  # to the second box's cell
    assert page.locator("td:target").get_attribute("data-status") == "fail"
    suite = ET.parse(reports / "junit.xml").getroot()
    names = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
    assert len(names) == len(set(names)) and ("test/host-step", f"step @ {second_daemon.tcp}") in names


def test_every_host_needs_two_hosts():
    out = subprocess.run(
        [*PUFFERTANK, "matrix", "--every-host", "--variant", "cpu"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "pass --host twice or more" in out.stderr and "Traceback" not in out.stderr
