"""The host's CA bundle reached pip only as a BuildKit secret: it is in no layer, no history entry, no config.

The host bundle holds certificates Debian's ca-certificates package does not (the TLS proxy's own CAs);
their base64 bodies must appear in no file of any layer of the lib image (which contains base and envs).
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import uuid
from pathlib import Path

import pytest

from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.build.resolve import pip_settings, resolve_ca_bundle

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PEM = re.compile(r"-----BEGIN CERTIFICATE-----\n(.*?)\n-----END CERTIFICATE-----", re.S)


def pem_bodies(text: str) -> set[str]:
    return set(PEM.findall(text))


@pytest.fixture(scope="module")
def host_bundle() -> Path:
    bundle = resolve_ca_bundle(BuildOptions(), pip_settings())
    if bundle is None:
        pytest.skip("this host has no CA bundle to hand to the build")
    return bundle


@pytest.fixture(scope="module")
def needles(docker_client, host_bundle, lib_image) -> list[bytes]:
    """First base64 line of each private certificate of the host bundle (unique: it holds the serial).

    Private = in neither the host's own ca-certificates package (/usr/share/ca-certificates) nor the
    image's Debian bundle. Public CAs differ between ca-certificates releases (and pip vendors its own
    list), so comparing against one list alone would flag a public CA that one release dropped.
    """
    from pufferlib.tank.containers import RunSpec, run_captured

    spec = RunSpec(lib_image, ["cat", "/etc/ssl/certs/ca-certificates.crt"], gpus="none", timeout=60)
    result = run_captured(docker_client, spec)
    assert result.exit_code == 0, result.stderr
    public = pem_bodies(result.stdout)
    for shipped in Path("/usr/share/ca-certificates").rglob("*.crt"):
        public |= pem_bodies(shipped.read_text(errors="replace"))
    private = pem_bodies(host_bundle.read_text()) - public
    return [body.splitlines()[0].encode() for body in private]


def test_history_and_config_hold_no_certificate(docker_client, lib_image, needles):
    image = docker_client.images.get(lib_image)
    for entry in image.history():
        created_by = entry.get("CreatedBy", "")
        assert "BEGIN CERTIFICATE" not in created_by
        assert not any(n.decode() in created_by for n in needles)
        assert not re.search(r"\b(COPY|ADD)\b.*(\.crt|\.pem|pip_ca)", created_by), created_by
    env = image.attrs["Config"].get("Env") or []
    assert not [e for e in env if e.startswith(("PIP_CERT=", "REQUESTS_CA_BUNDLE=", "SSL_CERT_FILE="))]


def _scan_layer(layer: tarfile.TarFile, needles: list[bytes], bundle_size: int, bundle_sha: str, found: list):
    overlap = max((len(n) for n in needles), default=0)
    for member in layer:
        if not member.isfile():
            continue
        if member.name.lstrip("./").startswith("run/secrets"):
            found.append(f"{member.name}: a secrets file in a layer")
        handle = layer.extractfile(member)
        digest = hashlib.sha256() if member.size == bundle_size else None
        previous = b""
        while chunk := handle.read(1 << 22):
            if digest:
                digest.update(chunk)
            window = previous + chunk
            for needle in needles:
                if needle in window:
                    found.append(f"{member.name}: holds a certificate only the host's bundle has")
            previous = chunk[-overlap:] if overlap else b""
        if digest and digest.hexdigest() == bundle_sha:
            found.append(f"{member.name}: a copy of the host's CA bundle")


def scan_image(client, ref: str, bundle: bytes, needles: list[bytes]) -> tuple[int, list[str]]:
    """Read every file of every layer of `ref` (streamed by `docker save`); report traces of the bundle."""
    bundle_sha, found, layers = hashlib.sha256(bundle).hexdigest(), [], 0
    stream = io.BufferedReader(_IterStream(client.images.get(ref).save(chunk_size=1 << 22)))
    with tarfile.open(fileobj=stream, mode="r|") as outer:
        for member in outer:
            if member.name.endswith("layer.tar"):
                layers += 1
                with tarfile.open(fileobj=outer.extractfile(member), mode="r|") as layer:
                    _scan_layer(layer, needles, len(bundle), bundle_sha, found)
    return layers, found


def test_no_layer_holds_the_host_bundle(docker_client, lib_image, host_bundle, needles):
    layers, found = scan_image(docker_client, lib_image, host_bundle.read_bytes(), needles)
    assert layers >= 5, f"read only {layers} layers from docker save"
    assert found == []


def test_the_scan_finds_a_copied_bundle(docker_client, host_bundle, needles):
    """The control: an image that COPYs the bundle is caught, so an empty finding above means something."""
    from pufferlib.tank.build.debian import ensure_debian_base

    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (
            ("Dockerfile", f"FROM {ensure_debian_base(docker_client)}\nCOPY ca.crt /opt/ca.crt\n".encode()),
            ("ca.crt", host_bundle.read_bytes()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    tag = f"puffertank-test/ca-control:{uuid.uuid4().hex[:8]}"
    docker_client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True)
    try:
        _, found = scan_image(docker_client, tag, host_bundle.read_bytes(), needles)
    finally:
        docker_client.images.remove(tag, force=True)
    assert "opt/ca.crt: a copy of the host's CA bundle" in found
    if needles:
        assert "opt/ca.crt: holds a certificate only the host's bundle has" in found


class _IterStream(io.RawIOBase):
    """A readable file over the byte chunks `docker save` streams (no temporary 2 GB file)."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._rest))
        buffer[:n], self._rest = self._rest[:n], self._rest[n:]
        return n
