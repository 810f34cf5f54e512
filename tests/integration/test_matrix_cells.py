"""The integration matrix itself: one test per registered binding x check, run in the cpu lib image.

The matrix runs once per session (a fresh container per binding, 2 at a time, as `puffertank matrix`
does); each test then reads its own cell. Its reports land in reports/matrix-tests/ for inspection.
"""

import pytest
from _repo import REPO

import pufferlib.environments as environments
from pufferlib.matrix_protocol import CHECKS
from pufferlib.tank.matrix import Host, Plan, registered_bindings, run_matrix
from pufferlib.tank.matrix.report import Report, write_all

pytestmark = pytest.mark.docker

REPORT_DIR = REPO / "reports" / "matrix-tests"
PL3 = "pufferlib3/"
# PufferLib 3.0's catalog (pufferlib3/*): its cells are test_matrix_pufferlib3.py's, which runs them once
BINDINGS = [b.name for b in environments.bindings() if not b.name.startswith(PL3)]


@pytest.fixture(scope="session")
def matrix_report(docker_client, lib_image) -> Report:
    host = Host("local", docker_client)
    plan = Plan(image=lib_image, variant="cpu", hosts=[host], bindings=[], jobs=2)
    plan.bindings = [b for b in registered_bindings(host, plan) if not b["name"].startswith(PL3)]
    report = run_matrix(plan)
    paths = write_all(report, REPORT_DIR)
    counts = report.counts()
    print(f"\nmatrix: {counts} in {report.wall_seconds:.0f}s; report {paths['html']}")
    return report


def cell(report: Report, env: str, check: str):
    found = [row for row in report.rows if row.env == env and row.check == check]
    assert len(found) == 1, f"{env}/{check}: expected one cell, found {len(found)}"
    return found[0]


def test_image_registers_what_the_source_registers(matrix_report):
    assert sorted({row.env for row in matrix_report.rows}) == sorted(BINDINGS)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("env", BINDINGS)
def test_cell(matrix_report, env, check):
    row = cell(matrix_report, env, check)
    assert row.status != "fail", f"{env} {check} failed:\n{row.detail}"
    if row.status == "skip":
        binding = environments.get(env)
        allowed = (
            {"gpu"}
            | (set() if binding.smoke.learn else {"learn"})
            | (set() if binding.pixels else {"render"})
        )
        assert check in allowed, f"{env} {check} skipped: {row.detail}"
        assert row.detail, "a skip must say why"
    if check in ("step", "serial", "multiprocessing"):
        assert row.sps and row.sps > 0


def test_microrts_learns_to_win(matrix_report):
    """The one learn cell judged on an env's own info (`wins`: MicroRTS's `win`), not on the return: it
    says so, and solves. It runs here only (~2 minutes of JVM games), not in tests/unit/smoke."""
    row = cell(matrix_report, "microrts/4x4", "learn")
    assert row.status == "pass", row.detail
    assert row.detail.startswith("win rate against the env's opponent"), row.detail
    assert "(solved at 0.9)" in row.detail and "stopped by solved" in row.detail, row.detail
    assert float(row.detail.split()[6]) <= 1.0, row.detail  # a rate, not the shaped return (~38)
