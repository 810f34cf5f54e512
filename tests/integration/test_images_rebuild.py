"""Touching a pufferlib file and rebuilding rebuilds only the lib stage; unchanged inputs rebuild nothing.

Works on a copy of the source tree (other people edit the real one) and tags into a throwaway namespace,
so puffertank/lib:cpu is never replaced by the edited image. The lib rebuild time is printed: it is the
"lib rebuild after a one-line edit" budget (<= 10 s on the reference 2-core machine), measured, not asserted.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pufferlib.tank.build.chain import build_chain
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.names import STAGES

pytestmark = [pytest.mark.docker, pytest.mark.slow]


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


def test_one_line_edit_rebuilds_only_lib(docker_client, image_chain, source_copy, namespace, capsys):
    before = build(source_copy, namespace, docker_client)
    marker = f"# one-line edit {uuid.uuid4().hex}"
    with open(source_copy / "pufferlib" / "__init__.py", "a") as f:
        f.write(f"\n{marker}\n")

    after = build(source_copy, namespace, docker_client)

    assert statuses(after) == {"base": "reused", "envs": "reused", "lib": "built"}
    assert after.stages["envs"].image_id == before.stages["envs"].image_id
    assert after.stages["lib"].image_id != before.stages["lib"].image_id
    installed = docker_client.containers.run(
        after.hash_tag("lib"),
        ["sh", "-c", "tail -n 1 /opt/venv/lib/python3.11/site-packages/pufferlib/__init__.py"],
        remove=True,
        labels={"puffertank.test": "rebuild"},
    )
    assert installed.decode().strip() == marker
    with capsys.disabled():
        print(f"\n[budget] lib rebuild after a one-line edit: {after.stages['lib'].seconds:.1f} s (<= 10 s)")
