"""ensure_debian_base makes a Debian 12 image with debootstrap + import when none exists (no registry).

On a fresh machine the session's chain build has just done this for puffertank/debian:bookworm; then that
image is checked instead of running debootstrap a second time (about a minute on 2 cores). The steps after
debootstrap run as root with paths and the mirror URL in them: a quote or a space must stay a character.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
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


# Stands in for debootstrap's download only (the quoting under test is ours): a tiny root filesystem of the
# same shape, with a downloaded package and package lists to clean up, and the mirror argument it was given.
# It records every option it was given (the --keyring among them): the last two arguments are the
# root filesystem and the mirror.
FAKE_DEBOOTSTRAP = """#!/bin/sh
set -eu
options=""
while [ $# -gt 2 ]; do options="$options$1 "; shift; done
rootfs=$1
mkdir -p "$rootfs/etc/apt" "$rootfs/var/cache/apt/archives/partial" "$rootfs/var/lib/apt/lists/partial"
touch "$rootfs/var/cache/apt/archives/base-files.deb" "$rootfs/var/lib/apt/lists/deb.debian.org_Release"
printf '%s\\n' "$2" > "$rootfs/etc/bootstrapped-from"
printf '%s\\n' "$options" > "$rootfs/etc/bootstrap-options"
"""


def _read(container, path: str) -> dict[str, bytes]:
    """{member name: content} of a file or folder in a (created, not started) container."""
    stream, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        return {m.name: (tar.extractfile(m).read() if m.isfile() else b"") for m in tar.getmembers()}


def test_a_quoted_mirror_and_a_spaced_tmpdir_are_just_characters(docker_client, tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "debootstrap").write_text(FAKE_DEBOOTSTRAP)
    (bindir / "debootstrap").chmod(0o755)
    spaced = tmp_path / "a tmp dir"
    spaced.mkdir()
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setattr(tempfile, "tempdir", str(spaced))  # what TMPDIR="…/a tmp dir" makes it
    mirror = """http://127.0.0.1:9/o'brien "mirror" $HOME `id` ;/debian"""
    tag = f"puffertank-test/debian-quoting:{uuid.uuid4().hex[:8]}"
    try:
        assert ensure_debian_base(docker_client, tag, mirror=mirror, log=lambda _: None) == tag
        made = docker_client.containers.create(tag, ["true"], labels={"puffertank.test": "debian-quoting"})
        try:
            sources = _read(made, "/etc/apt/sources.list")["sources.list"].decode()
            given = _read(made, "/etc/bootstrapped-from")["bootstrapped-from"].decode()
            options = _read(made, "/etc/bootstrap-options")["bootstrap-options"].decode().split()
            archives, lists = _read(made, "/var/cache/apt/archives"), _read(made, "/var/lib/apt/lists")
        finally:
            made.remove(force=True)
    finally:
        if tag in {t for i in docker_client.images.list(name=tag.split(":")[0]) for t in i.tags}:
            docker_client.images.remove(tag)
    assert given == mirror + "\n"
    assert options == ["--variant=minbase", f"--keyring={debian.debian_keyring()}", "bookworm"]
    assert sources == f"deb {mirror} bookworm main\ndeb {mirror} bookworm-updates main\n"
    assert not [name for name in archives if name.endswith(".deb")], archives
    assert list(lists) == ["lists"], lists  # emptied
    assert list(spaced.iterdir()) == [], "the work directory was not removed"
