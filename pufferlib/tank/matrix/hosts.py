"""The Docker daemons a matrix runs on, and removing what a run left on them."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import docker

from pufferlib.tank import registry
from pufferlib.tank.engine import TlsOptions, connect, get_client, require_image
from pufferlib.tank.errors import UsageError

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
        at = registry.configured() or "HOST:PORT"
        fix = (
            f"DOCKER_HOST={host.url} puffertank pull --registry {at} --variant {variant} (after puffertank "
            f"push from the box that built it), or DOCKER_HOST={host.url} {fix}"
        )
    return require_image(host.client, image, fix, where=host.url)


def require_same_image(digests: dict[str, str], image: str, variant: str) -> None:
    """UsageError unless every host's `image` has one id: a matrix over boxes that run different images
    would report two images as one. `digests`: host URL -> the image's id there."""
    if len(set(digests.values())) < 2:
        return
    first = next(iter(digests.values()))
    each = ", ".join(f"{url} {digest[:19]}" for url, digest in digests.items())
    at = registry.configured() or "HOST:PORT"
    others = [url for url, digest in digests.items() if digest != first]

    def on(url: str) -> str:
        return "" if url == "local" else f"DOCKER_HOST={url} "

    pulls = "; ".join(f"{on(url)}puffertank pull --registry {at} --variant {variant}" for url in others)
    raise UsageError(
        f"the hosts have different images under {image}: {each}",
        f"make them one image: {on(next(iter(digests)))}puffertank push --registry {at} --variant {variant}, "
        f"then {pulls}; or pass --allow-different-images to compare different images on purpose",
    )


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
