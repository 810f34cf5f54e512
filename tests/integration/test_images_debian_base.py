"""ensure_debian_base makes a Debian 12 image with debootstrap + import when none exists (no registry).

On a fresh machine the session's chain build has just done this for puffertank/debian:bookworm; then that
image is checked instead of running debootstrap a second time (about a minute on 2 cores).
"""

from __future__ import annotations

import uuid

import pytest

from pufferlib.tank.build import debian
from pufferlib.tank.build.debian import ensure_debian_base
from pufferlib.tank.names import DEBIAN_BASE

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def made_tag(docker_client, image_chain):
    if DEBIAN_BASE in debian.MADE_BY_DEBOOTSTRAP:
        yield DEBIAN_BASE  # made by this session's chain build
        return
    tag = f"puffertank-test/debian:{uuid.uuid4().hex[:8]}"
    said: list[str] = []
    assert ensure_debian_base(docker_client, tag, log=said.append) == tag
    assert any("debootstrap" in line for line in said), said
    yield tag
    docker_client.images.remove(tag)


def test_a_made_base_is_debian_12_without_package_cache(made_tag, container):
    assert made_tag in debian.MADE_BY_DEBOOTSTRAP
    script = ". /etc/os-release; echo $VERSION_ID; ls /var/cache/apt/archives/*.deb 2>/dev/null | wc -l"
    out = container.run_and_wait(["sh", "-c", script], image=made_tag).stdout.split()
    assert out == ["12", "0"], out


def test_an_existing_base_is_reused_silently(docker_client, made_tag):
    before = docker_client.images.get(made_tag).id
    said: list[str] = []
    assert ensure_debian_base(docker_client, made_tag, log=said.append) == made_tag
    assert said == [] and docker_client.images.get(made_tag).id == before
