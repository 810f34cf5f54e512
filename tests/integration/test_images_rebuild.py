"""Touching a pufferlib file and rebuilding rebuilds only the lib stage; unchanged inputs rebuild nothing.

Works on a copy of the source tree (other people edit the real one) and tags into a throwaway namespace,
so puffertank/lib:cpu is never replaced by the edited image. The lib rebuild time is printed: it is the
"lib rebuild after a one-line edit" budget (<= 10 s on the reference 2-core machine), measured, not asserted.
The edit is to a module PufferLib 3.0's catalog stage does not read (docker/catalog_sources.py lists what it
reads; an edit to one of those reruns its minutes as well, by design), and the test checks that it is.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pufferlib.tank.build.chain import build_chain
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.names import STAGES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EDITED = Path("pufferlib") / "models.py"  # the trainer's side: outside the catalog stage's sources


def build(source: Path, namespace: str, client) -> dict:
    return build_chain(BuildOptions(variant="cpu", source=source, namespace=namespace), client)


def statuses(chain) -> dict[str, str]:
    return {name: result.status for name, result in chain.stages.items()}


def test_unchanged_inputs_rebuild_nothing(docker_client, image_chain, source_copy, namespace):
    # the session's chain may predate the copy (the tree changes as people work), so the copy's first
    # build may rebuild lib; the second must rebuild nothing
    first = build(source_copy, namespace, docker_client)
    assert first.stages["base"].image_id == image_chain.result.stages["base"].image_id
    second = build(source_copy, namespace, docker_client)
    assert statuses(second) == dict.fromkeys(STAGES, "reused")
    assert {s: r.image_id for s, r in second.stages.items()} == {
        s: r.image_id for s, r in first.stages.items()
    }


def catalog_sources(source: Path, dest: Path) -> set[Path]:
    """What the catalog stage copies from `source` (run as Dockerfile.lib runs it)."""
    script = source / "docker" / "catalog_sources.py"
    subprocess.run([sys.executable, script, source, dest], check=True, capture_output=True)
    return {p.relative_to(dest) for p in dest.rglob("*") if p.is_file()}


def test_one_line_edit_rebuilds_only_lib(docker_client, image_chain, source_copy, namespace, capsys):
    read_by_catalog = catalog_sources(source_copy, source_copy.parent / "catalog-src")
    assert Path("pufferlib") / "core.py" in read_by_catalog  # the list is real
    assert EDITED not in read_by_catalog, "pick an edit outside the catalog stage's sources"
    before = build(source_copy, namespace, docker_client)
    marker = f"# one-line edit {uuid.uuid4().hex}"
    with open(source_copy / EDITED, "a") as f:
        f.write(f"\n{marker}\n")

    after = build(source_copy, namespace, docker_client)

    assert statuses(after) == {"base": "reused", "envs": "reused", "lib": "built"}
    assert after.stages["envs"].image_id == before.stages["envs"].image_id
    assert after.stages["lib"].image_id != before.stages["lib"].image_id
    installed = docker_client.containers.run(
        after.hash_tag("lib"),
        ["sh", "-c", f"tail -n 1 /opt/venv/lib/python3.11/site-packages/{EDITED}"],
        remove=True,
        labels={"puffertank.test": "rebuild"},
    )
    assert installed.decode().strip() == marker
    with capsys.disabled():
        print(f"\n[budget] lib rebuild after a one-line edit: {after.stages['lib'].seconds:.1f} s (<= 10 s)")
