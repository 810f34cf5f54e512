"""The Docker daemons a matrix runs on, and removing what a run left on them."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import docker

from pufferlib.tank.engine import TlsOptions, connect, get_client, require_image

LABEL = "puffertank.matrix"  # every matrix container carries LABEL=<run id>


@dataclass
class Host:
    """One Docker daemon the matrix runs containers on."""

    url: str  # "local" for the default engine (DOCKER_HOST or the socket)
    client: docker.DockerClient

    @classmethod
    def connect(cls, url: str | None, tls: TlsOptions | None = None, insecure: bool = False) -> Host:
        """The default engine for None/"local"; else ssh://, TLS tcp:// (plain tcp:// only if insecure)."""
        if url in (None, "", "local"):
            return cls(url="local", client=get_client())
        return cls(url=url, client=connect(url, tls, insecure=insecure))


def require_host_image(host: Host, image: str, variant: str) -> docker.models.images.Image:
    fix = f"puffertank build --variant {variant}"
    if host.url != "local":
        fix = f"DOCKER_HOST={host.url} {fix}  (or: docker save {image} | docker -H {host.url} load)"
    return require_image(host.client, image, fix, where=host.url)


def cleanup(hosts: list[Host], run_id: str) -> int:
    """Remove every container of this run on every host (the safety net behind each finally)."""
    removed = 0
    for host in hosts:
        with contextlib.suppress(docker.errors.DockerException):
            for container in host.client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}):
                with contextlib.suppress(docker.errors.APIError):
                    container.remove(force=True)
                    removed += 1
    return removed
