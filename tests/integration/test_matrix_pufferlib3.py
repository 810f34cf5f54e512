"""The integration matrix over PufferLib 3.0's catalog (`pufferlib3/*`), built in the cpu lib image.

The image registers what its catalog stage built and audited; tests/run.sh builds the same catalog on the
host (PUFFERTANK_TEST_PL3_HOME), whose catalog.json says which envs are available and which learn cells are
on (`ocean_native.PL3_LEARN`). Every cell must pass, or skip where the binding has nothing to check (no
GPU, no learn cell, or a c_render that cannot be recorded: `ocean_native.PL3_NO_DRAW`); `render` draws each
env's frames through its c_render on a private Xvfb.
"""

import json
import os
from pathlib import Path

import pytest
from _repo import REPO
from _strict import skip_or_fail

from pufferlib.environments.ocean_native import PL3_LEARN, PL3_NO_DRAW
from pufferlib.tank.matrix import Host, Plan, registered_bindings, run_matrix
from pufferlib.tank.matrix.report import write_all

pytestmark = pytest.mark.docker

REPORT_DIR = REPO / "reports" / "matrix-pufferlib3"


def test_every_catalog_env_is_green_in_the_image(docker_client, lib_image):
    home = os.environ.get("PUFFERTANK_TEST_PL3_HOME")
    if not home:
        skip_or_fail("PUFFERTANK_TEST_PL3_HOME is unset: tests/run.sh builds the catalog and sets it")
    envs = json.loads((Path(home) / "catalog.json").read_text())["envs"]
    available = sorted(f"pufferlib3/{name}" for name, entry in envs.items() if entry["available"])

    host = Host("local", docker_client)
    plan = Plan(image=lib_image, variant="cpu", hosts=[host], bindings=[], jobs=2)
    plan.bindings = [b for b in registered_bindings(host, plan) if b["name"].startswith("pufferlib3/")]
    assert sorted(b["name"] for b in plan.bindings) == available, "the image's catalog is not the host's"
    report = run_matrix(plan)
    write_all(report, REPORT_DIR)

    learns = {f"pufferlib3/{name}" for name in PL3_LEARN}
    bad = []
    for row in report.rows:
        draws = row.env.removeprefix("pufferlib3/") not in PL3_NO_DRAW  # its c_render on a private Xvfb
        allowed_skips = (
            {"gpu"} | (set() if draws else {"render"}) | (set() if row.env in learns else {"learn"})
        )
        if row.status == "pass" or (row.status == "skip" and row.check in allowed_skips and row.detail):
            continue
        bad.append(f"{row.env} {row.check}: {row.status}: {row.detail[-300:]}")
    assert not bad, "\n".join(bad)
    assert {row.env for row in report.rows if row.check == "learn" and row.status == "pass"} == learns & set(
        available
    )
