"""What the fleet tests share: a real registry (Debian's docker-registry) on loopback, and a tiny chain.

The tiny chain is base -> envs -> lib built FROM scratch, each stage one layer of random bytes (so its size
is what moves), labelled and tagged through tank/names.py as `puffertank build` labels and tags the real
chain: push, pull, the matrix's image check and doctor read those labels, not the image's contents. It
lets the tests measure what moves in seconds, where the real cpu chain is 3.85 GB.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
from _daemons import free_port, stop
from _strict import skip_or_fail

from pufferlib.tank.names import (
    HASH_LABEL,
    PARENT_LABEL,
    STAGE_LABEL,
    STAGES,
    VARIANT_LABEL,
    hash_ref,
    image_ref,
)

PUFFERTANK = [sys.executable, "-m", "pufferlib.tank.cli"]


def puffertank(
    *argv: str, docker_host: str | None = None, config=None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The CLI as a user runs it (in `env`, default os.environ), without PUFFERTANK_REGISTRY or a settings
    file (PUFFERTANK_CONFIG names one that is not there unless `config`); DOCKER_HOST only if given."""
    env = {k: v for k, v in (env or os.environ).items() if k not in ("PUFFERTANK_REGISTRY", "DOCKER_HOST")}
    env["PUFFERTANK_CONFIG"] = str(config or "/nonexistent/puffertank.conf")
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    return subprocess.run([*PUFFERTANK, *argv], env=env, capture_output=True, text=True, timeout=300)


def tags_of(client: docker.DockerClient, namespace: str) -> dict[str, str]:
    """Every tag under `namespace` on that engine, with its image id."""
    return {t: i.id for i in client.images.list() for t in i.tags if t.startswith(f"{namespace}/")}


REGISTRY_BIN = "docker-registry"  # Debian 12's package of the CNCF distribution registry (2.8.2)


@dataclass
class RegistryProcess:
    address: str  # 127.0.0.1:PORT
    root: Path  # its storage

    def blob_bytes(self) -> int:
        """What the registry stores: every blob's size (layers, configs, manifests)."""
        blobs = self.root / "docker" / "registry" / "v2" / "blobs"
        return sum(p.stat().st_size for p in blobs.rglob("data")) if blobs.is_dir() else 0

    def blob_file(self, digest: str) -> Path:
        hexdigest = digest.removeprefix("sha256:")
        blobs = self.root / "docker" / "registry" / "v2" / "blobs" / "sha256"
        return blobs / hexdigest[:2] / hexdigest / "data"


@contextlib.contextmanager
def registry_on_loopback(folder: Path) -> Iterator[RegistryProcess]:
    """`docker-registry serve` with its storage in `folder`, on 127.0.0.1 (Docker talks to a loopback registry
    without TLS); stopped on the way out."""
    if shutil.which(REGISTRY_BIN) is None:
        skip_or_fail("docker-registry is missing: apt-get install docker-registry (tests/run.sh does)")
    address = f"127.0.0.1:{free_port()}"
    root = folder / "storage"
    config = folder / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root}\n"
        f"http:\n  addr: {address}\n"
    )
    log = open(folder / "registry.log", "w")  # noqa: SIM115 (kept open for the registry's lifetime)
    proc = subprocess.Popen(
        [REGISTRY_BIN, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://{address}/v2/", timeout=2).close()
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"docker-registry did not start:\n{(folder / 'registry.log').read_text()}")
            time.sleep(0.2)
        yield RegistryProcess(address, root)
    finally:
        stop(proc)
        log.close()


def build_tiny_stage(
    client: docker.DockerClient,
    stage: str,
    payload: bytes,
    namespace: str,
    parent: str | None,
    parent_hash: str = "",
    variant: str = "cpu",
) -> docker.models.images.Image:
    """One stage of the tiny chain: FROM `parent` (scratch for base), one layer holding `payload`, tagged
    NAMESPACE/STAGE:VARIANT and its content-hash tag."""
    content_hash = hashlib.sha256(f"{stage}\n{parent_hash}\n".encode() + payload).hexdigest()
    dockerfile = f"FROM {parent or 'scratch'}\nCOPY {stage}.bin /tank/{stage}.bin\n".encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile), (f"{stage}.bin", payload)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    labels = {
        STAGE_LABEL: stage,
        HASH_LABEL: content_hash,
        VARIANT_LABEL: variant,
        PARENT_LABEL: parent or "scratch",
    }
    tagged = hash_ref(stage, variant, content_hash, namespace)
    image, _ = client.images.build(
        fileobj=buffer, custom_context=True, tag=tagged, labels=labels, rm=True, forcerm=True
    )
    image.tag(*image_ref(stage, variant, namespace).rsplit(":", 1))
    return client.images.get(tagged)


def build_tiny_chain(
    client: docker.DockerClient, namespace: str, sizes: dict[str, int], variant: str = "cpu"
) -> dict[str, docker.models.images.Image]:
    """base, envs and lib of random bytes of `sizes` each."""
    images: dict[str, docker.models.images.Image] = {}
    parent, parent_hash = None, ""
    for stage in STAGES:
        payload = os.urandom(sizes[stage])
        image = build_tiny_stage(client, stage, payload, namespace, parent, parent_hash, variant)
        images[stage] = image
        parent_hash = image.labels[HASH_LABEL]
        parent = hash_ref(stage, variant, parent_hash, namespace)
    return images


def remove_namespace(client: docker.DockerClient, namespace: str) -> None:
    """Every tag under `namespace` (and under REGISTRY/namespace), and the images only they held."""
    for image in client.images.list():
        for tag in image.tags:
            if tag.startswith(f"{namespace}/") or f"/{namespace}/" in tag:
                with contextlib.suppress(docker.errors.APIError):
                    client.images.remove(tag, force=True)
