"""An engine that is gone is not an env failure: run_binding() against a Docker client whose socket
nothing listens on (a real client, a real connection refused) raises EngineFault naming the engine, and
run_matrix() retries it, records every attempt and reports engine-error cells, which the exit status,
JUnit and the page keep apart from the envs' failures. (A real engine killing a real container:
tests/integration/test_matrix_engine_errors.py.)"""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import docker
import pytest

from pufferlib.matrix_protocol import CHECKS
from pufferlib.tank.matrix import Host, Plan
from pufferlib.tank.matrix.binding import EngineFault, run_binding
from pufferlib.tank.matrix.cli import ENGINE_EXIT, run_status
from pufferlib.tank.matrix.progress import Progress
from pufferlib.tank.matrix.report import Report, render_html, write_junit
from pufferlib.tank.matrix.run import Run


def gone(tmp_path: Path) -> Host:
    """A host whose daemon is gone: its socket path exists in no listening form."""
    client = docker.DockerClient(base_url=f"unix://{tmp_path}/docker.sock", version="1.41", timeout=5)
    return Host(f"unix://{tmp_path}/docker.sock", client)


def test_a_gone_engine_raises_engine_fault(tmp_path):
    host = gone(tmp_path)
    plan = Plan("puffertank/lib:cpu", "cpu", [host], [{"name": "ocean/squared"}])
    with pytest.raises(EngineFault, match=f"the Docker engine on {host.url} failed") as fault:
        run_binding(host, plan, plan.bindings[0], lambda cell: None, threading.Event())
    assert fault.value.seen == set()


def test_it_is_retried_then_reported_as_engine_error(tmp_path):
    host = gone(tmp_path)
    plan = Plan("puffertank/lib:cpu", "cpu", [host], [{"name": "ocean/squared"}], retries=2, backoff=0.0)
    report = Report(plan.image, "sha256:feed", "cpu", hosts=[host.url])
    run = Run(plan, report, Progress(["ocean/squared"], quiet=True))
    run.worker(host)
    assert [(a["attempt"], a["outcome"]) for a in report.attempts] == [
        (1, "engine-error"),
        (2, "engine-error"),
        (3, "engine-error"),
    ]
    assert [c.status for c in report.rows] == ["engine-error"] * len(CHECKS)
    assert report.engine_failed and not report.failed
    write_junit(report, tmp_path / "junit.xml")
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert (suite.get("failures"), suite.get("errors")) == ("0", str(len(CHECKS)))
    page = render_html(report)
    assert 'id="engine"' in page and "0 failed" in page and f"{len(CHECKS)} engine errors" in page
    assert page.count('data-status="engine-error"') == len(CHECKS) and "attempt 3" in page
    assert run_status(report, "new-failure") == ENGINE_EXIT == 3  # only the engine failed
    report.rows[0].status = "fail"
    assert run_status(report, "new-failure") == 1  # an env's failure is the answer that matters


def test_negative_retries_is_a_usage_error(capsys):
    from pufferlib.tank.cli import main

    assert main(["matrix", "--retries", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--retries must be >= 0" in err and "Traceback" not in err
