"""ensure_debian_base makes a Debian 12 image with debootstrap + import when none exists (no registry)."""

from __future__ import annotations

import uuid

import pytest

from pufferlib.tank.images import ensure_debian_base

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture
def fresh_tag(docker_client):
    tag = f"puffertank-test/debian:{uuid.uuid4().hex[:8]}"
    yield tag
    for image in docker_client.images.list(name=tag.split(":")[0]):
        if tag in image.tags:
            docker_client.images.remove(tag)


def test_makes_debian_12_when_missing_and_reuses_it(docker_client, fresh_tag, container):
    said: list[str] = []
    assert ensure_debian_base(docker_client, fresh_tag, log=said.append) == fresh_tag
    assert any("debootstrap" in line for line in said), said
    first = docker_client.images.get(fresh_tag).id

    said.clear()
    assert ensure_debian_base(docker_client, fresh_tag, log=said.append) == fresh_tag
    assert said == [] and docker_client.images.get(fresh_tag).id == first  # reused, silently

    script = ". /etc/os-release; echo $VERSION_ID; ls /var/cache/apt/archives/*.deb 2>/dev/null | wc -l"
    out = container.run_and_wait(["sh", "-c", script], image=fresh_tag).stdout.split()
    assert out == ["12", "0"], out
