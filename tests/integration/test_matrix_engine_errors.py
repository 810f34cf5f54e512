"""An engine fault on the real engine: while a matrix runs ocean/squared, the test kills the binding's
container from outside (`docker kill`, as a daemon restart or the OOM killer would end it). Without
retries its unreported cells are engine-error, not fail, and the report keeps them apart (JUnit errors,
the page's engine section); with --retries 1 the second container runs, the cells pass, and
matrix.json's attempts holds both attempts."""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET

import pytest

docker = pytest.importorskip("docker")

from pufferlib.tank.matrix import LABEL, Host, Plan, registered_bindings, run_matrix, select  # noqa: E402
from pufferlib.tank.matrix.report import render_html, write_junit  # noqa: E402

pytestmark = pytest.mark.docker


def killed_once(client, plan: Plan) -> threading.Thread:
    """A thread that kills the first running container of the plan's run, then stops watching."""

    def watch() -> None:
        deadline = time.monotonic() + 600  # a backstop: the run itself ends long before
        while time.monotonic() < deadline:
            running = client.containers.list(filters={"label": f"{LABEL}={plan.run_id}"})
            if running:
                running[0].kill()
                return
            time.sleep(0.05)

    return threading.Thread(target=watch, daemon=True)


def run_with_a_kill(docker_client, lib_image: str, retries: int):
    plan = Plan(lib_image, "cpu", [Host("local", docker_client)], [], jobs=1, retries=retries, backoff=0.5)
    plan.bindings = select(registered_bindings(plan.hosts[0], plan), ["ocean/squared"])
    watcher = killed_once(docker_client, plan)
    watcher.start()  # after the bindings were listed: their container carries the run's label too
    report = run_matrix(plan)
    watcher.join(timeout=5)
    return report


def test_a_killed_container_is_an_engine_error_not_a_failure(docker_client, lib_image, tmp_path):
    report = run_with_a_kill(docker_client, lib_image, retries=0)
    statuses = {row.check: row.status for row in report.rows}
    assert "fail" not in statuses.values() and "engine-error" in statuses.values(), statuses
    assert report.engine_failed and not report.failed
    engine = next(row for row in report.rows if row.status == "engine-error")
    assert "killed from outside the env (exit 137, SIGKILL" in engine.detail, engine.detail
    assert [(a["attempt"], a["outcome"]) for a in report.attempts] == [(1, "engine-error")]
    write_junit(report, tmp_path / "junit.xml")
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert suite.get("failures") == "0" and int(suite.get("errors")) == report.counts()["engine-error"]
    assert 'id="engine"' in render_html(report)


def test_a_retry_that_runs_records_both_attempts(docker_client, lib_image):
    report = run_with_a_kill(docker_client, lib_image, retries=1)
    assert {row.status for row in report.rows} <= {"pass", "skip"}, [(r.check, r.status) for r in report.rows]
    outcomes = [(a["attempt"], a["outcome"]) for a in report.attempts]
    assert outcomes == [(1, "engine-error"), (2, "ran")], report.attempts
    assert "killed from outside" in report.attempts[0]["detail"]
