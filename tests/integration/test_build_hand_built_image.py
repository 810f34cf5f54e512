"""An image built by hand FROM a stage image inherits its content-hash label: the chain must still find the
stage's own image by that hash, not the hand-built one (which would be retagged as the stage)."""

from __future__ import annotations

import io

import pytest

from pufferlib.tank.build.chain import _find_by_hash

pytestmark = pytest.mark.docker


def test_a_hand_built_child_is_not_taken_for_its_parent_stage(docker_client, image_chain, namespace) -> None:
    envs = image_chain.result.stages["envs"]
    dockerfile = f'FROM {image_chain.image("envs")}\nLABEL puffertank.stage="lib"\n'
    child, _ = docker_client.images.build(
        fileobj=io.BytesIO(dockerfile.encode()), tag=f"{namespace}/by-hand:1", rm=True, forcerm=True
    )
    assert child.labels["puffertank.content-hash"] == envs.content_hash  # the inheritance this guards against
    found = _find_by_hash(docker_client, "envs", envs.content_hash)
    assert found is not None and found.id == envs.image_id, (found, child.id)
    assert _find_by_hash(docker_client, "lib", envs.content_hash).id == child.id  # the stage label decides
