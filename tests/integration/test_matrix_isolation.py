"""A binding that raises or hangs fails only its own cells; every container is removed."""

from pathlib import Path

import pytest

from pufferlib.tank.matrix import LABEL, Host, Plan, registered_bindings, run_matrix, select

pytestmark = pytest.mark.docker

PLUGIN = Path(__file__).parent / "plugins" / "broken_bindings.py"


@pytest.fixture(scope="module")
def broken_run(docker_client, lib_image):
    host = Host("local", docker_client)
    plan = Plan(image=lib_image, variant="cpu", hosts=[host], bindings=[], jobs=2, plugins=[PLUGIN])
    listed = registered_bindings(host, plan)
    plan.bindings = select(listed, ["test/*", "ocean/bandit"])
    report = run_matrix(plan)
    return plan, report


def rows(report, env):
    return {row.check: row for row in report.rows if row.env == env}


def test_plugin_bindings_are_listed(broken_run):
    plan, _ = broken_run
    assert [b["name"] for b in plan.bindings] == ["ocean/bandit", "test/hangs", "test/raises"]


def test_raising_binding_fails_its_own_cells(broken_run):
    _, report = broken_run
    cells = rows(report, "test/raises")
    assert cells["make"].status == "pass"
    assert cells["reset"].status == "fail"
    assert "deliberately broken env" in cells["reset"].detail
    assert cells["step"].status == "skip" and "reset failed" in cells["step"].detail


def test_hanging_binding_times_out(broken_run):
    _, report = broken_run
    cells = rows(report, "test/hangs")
    assert cells["reset"].status == "pass"
    assert cells["step"].status == "fail"
    assert "timed out after 20s" in cells["step"].detail
    assert report.env_seconds["test/hangs"] < 60  # killed at its budget, not left to hang


def test_other_bindings_go_on(broken_run):
    _, report = broken_run
    cells = rows(report, "ocean/bandit")
    assert cells["render"].status == "skip" and "no pixel observations" in cells["render"].detail
    assert {c.status for name, c in cells.items() if name not in ("gpu", "render")} == {"pass"}


def test_no_container_left(broken_run, docker_client):
    plan, _ = broken_run
    assert docker_client.containers.list(all=True, filters={"label": f"{LABEL}={plan.run_id}"}) == []
