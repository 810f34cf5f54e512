"""The doctor's "image vs source" verdict agrees with `puffertank build`: current after a build, stale after
an edit. Built from a copy of the source under a test namespace (base and envs are reused by content hash,
only lib is built), so the real tree and the real tags are never touched."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import docker
import pytest
from _repo import REPO

from pufferlib.tank.build.chain import build_chain
from pufferlib.tank.build.freshness import freshness
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.build.plan import STAGE_SPECS
from pufferlib.tank.names import STAGES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NAMESPACE = "puffertank-test-doctor"


def _copy_source(dest: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.whl")
    # every top-level file a stage builds from (the plan's list, not a copy of it)
    tops = {path for stage in STAGE_SPECS.values() for path in (stage.dockerfile, *stage.context)}
    for name in sorted(tops):
        if "/" not in name and (REPO / name).is_file():
            shutil.copy2(REPO / name, dest / name)
    shutil.copytree(REPO / "docker", dest / "docker", ignore=skip)
    shutil.copytree(REPO / "pufferlib", dest / "pufferlib", ignore=skip)


@pytest.fixture
def test_chain(docker_client: docker.DockerClient, image_chain, tmp_path: Path):
    source = tmp_path / "src"
    source.mkdir()
    _copy_source(source)
    try:
        chain = build_chain(BuildOptions(variant="cpu", namespace=NAMESPACE, source=source), docker_client)
        yield chain, source
    finally:
        # Only our namespace's tags: the same images also carry the session's and the real chain's tags.
        for stage in STAGES:
            for image in docker_client.images.list(name=f"{NAMESPACE}/{stage}"):
                for tag in image.tags:
                    if tag.startswith(f"{NAMESPACE}/"):
                        with contextlib.suppress(docker.errors.APIError):
                            docker_client.images.remove(tag)


def test_freshness_follows_the_source(docker_client: docker.DockerClient, test_chain) -> None:
    chain, source = test_chain
    assert chain.stages["envs"].status == "reused", (
        "envs should come from the session's chain by content hash"
    )
    assert freshness(docker_client, "cpu", NAMESPACE, source) == {
        "base": None,
        "envs": "current",
        "lib": "current",
    }
    with (source / "pufferlib" / "__init__.py").open("a") as f:
        f.write("\n# an edit after the build\n")
    # a lib-only change; no verdict for base (its hash depends on how the build resolved torch)
    assert freshness(docker_client, "cpu", NAMESPACE, source) == {
        "base": None,
        "envs": "current",
        "lib": "stale",
    }
    with (source / "docker" / "install-envs.sh").open("a") as f:
        f.write("\n# an edit below lib\n")
    assert freshness(docker_client, "cpu", NAMESPACE, source) == {
        "base": None,
        "envs": "stale",
        "lib": "stale",
    }
