"""The three images of the cpu chain exist under their tags and carry the labels tools rely on."""

from __future__ import annotations

import pytest

from pufferlib.tank.names import HASH_LABEL, STAGES

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("stage", STAGES)
def test_stage_tags_and_labels(docker_client, image_chain, stage):
    result = image_chain.result.stages[stage]
    image = docker_client.images.get(image_chain.image(stage))
    assert image.id == result.image_id
    # build_chain tagged it with the plain and the content-hash tag (read right after the build: someone
    # else's rebuild may move puffertank/<stage>:cpu later in the session)
    assert {result.tag, result.hash_tag} <= set(image_chain.tags_at_build[stage])
    assert result.hash_tag == f"puffertank/{stage}:cpu-{result.content_hash[:12]}"
    labels = image.labels
    assert labels[HASH_LABEL] == result.content_hash
    assert labels["puffertank.stage"] == stage
    assert labels["puffertank.variant"] == "cpu"
    assert labels["puffertank.cuda-version"] == "none"
    assert labels["puffertank.torch"].endswith("+cpu")
    assert labels["puffertank.uid"] == labels["puffertank.gid"] == "1000"
    for key in ("title", "description", "version", "created", "licenses"):
        assert labels.get(f"org.opencontainers.image.{key}"), f"missing OCI label {key} on {result.tag}"


def test_lib_runs_under_tini_with_the_entrypoint(docker_client, lib_image):
    config = docker_client.images.get(lib_image).attrs["Config"]
    assert config["Entrypoint"][:2] == ["/usr/bin/tini", "--"]
    assert config["Entrypoint"][2] == "/usr/local/bin/puffertank-entrypoint"
    assert config["WorkingDir"] == "/workspace"
