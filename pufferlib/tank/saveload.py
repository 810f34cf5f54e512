"""`puffertank push --host ssh://USER@BOX`: the chain straight into another box's engine, without a registry.

The image ids (config digests) of base, envs, lib and the image base was built on are compared on both sides
first, through the box's engine (docker's ssh:// transport runs `docker system dial-stdio` there; a TLS
tcp:// engine works the same way). Only the images the box lacks move: one `docker save` of them, by id, is
streamed into the box's `docker load` with progress (bytes, speed). The stream carries no tags, so a load that
fails tags nothing; the usual names (`puffertank/lib:cpu`, `puffertank/lib:cpu-<hash>`) are set there only
once every image is in, and then the content-hash tags they supersede are retired as `pull` does.

save/load moves whole images: an image's stream holds every layer under it, including those the box has
already (after a lib edit, the whole lib image goes, GBs). The registry path (transfer.py) moves only the
layers that changed.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

import docker

from pufferlib.tank.engine import TlsOptions, connect, get_client, image_exists
from pufferlib.tank.errors import TankError, UsageError
from pufferlib.tank.names import NAMESPACE, PARENT_LABEL, hash_ref, image_ref
from pufferlib.tank.stages import local_chain, retire_superseded
from pufferlib.tank.transfer import MB, show

CHUNK = 1 << 20
TIMEOUT = 900  # seconds without a byte from the box's engine (it answers a load once it has read it all)


def check_host(url: str, tls: TlsOptions) -> str:
    """`url` if push may send images there (ssh://, or tcp:// with TLS), else a UsageError naming the fix."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme == "ssh" or (scheme == "tcp" and tls.enabled):
        return url
    raise UsageError(
        f"--host {url!r}: push sends images to another box's engine over ssh:// or TLS only "
        "(whoever reaches a plain engine is root on that box)",
        "name the box as ssh://USER@HOST[:PORT] (`docker -H ssh://USER@HOST info` works there), or a TLS "
        "engine: tcp://HOST:2376 with --tlsverify and ca.pem, cert.pem, key.pem in DOCKER_CERT_PATH",
    )


@dataclass(frozen=True)
class Item:
    """An image to have on the box: its id and the names it gets there."""

    name: str  # for messages: the stage, or the parent's reference
    image_id: str
    refs: tuple[str, ...]
    size: int  # bytes, uncompressed, with every layer under it (what its save stream holds)
    stage: str = ""  # base, envs or lib; "" for the image base was built on


@dataclass
class Sent:
    """What one push to a box did."""

    host: str
    sent: list[Item] = field(default_factory=list)
    there: list[Item] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        if not self.sent:
            names = ", ".join(i.name for i in self.there)
            return f"puffertank push: {self.host} has every image already ({names}): nothing sent"
        speed = f", {self.bytes / MB / self.seconds:.1f} MB/s" if self.seconds > 0 else ""
        there = f"; already there: {', '.join(i.name for i in self.there)}" if self.there else ""
        return (
            f"puffertank push: {len(self.sent)} images ({', '.join(i.name for i in self.sent)}) sent to "
            f"{self.host}: {self.bytes / MB:.1f} MB in {self.seconds:.1f} s{speed}{there}"
        )


def chain_items(client: docker.DockerClient, variant: str, namespace: str) -> list[Item]:
    """The local chain as Items: the image base was built on (a NAME:TAG here: its layers are base's own),
    then base, envs, lib with their content-hash and variant tags."""
    items: list[Item] = []
    chain = local_chain(client, variant, namespace)
    parent = (client.images.get(chain[0].image_id).labels or {}).get(PARENT_LABEL, "")
    if ":" in parent.rsplit("/", 1)[-1]:
        with contextlib.suppress(docker.errors.ImageNotFound):
            image = client.images.get(parent)
            items.append(Item(parent, image.id, (parent,), int(image.attrs.get("Size") or 0)))
    for link in chain:
        image = client.images.get(link.image_id)
        refs = (
            hash_ref(link.stage, variant, link.content_hash, namespace),
            image_ref(link.stage, variant, namespace),
        )
        items.append(Item(link.stage, link.image_id, refs, int(image.attrs.get("Size") or 0), link.stage))
    return items


def _save(client: docker.DockerClient, image_ids: list[str]) -> Iterator[bytes]:
    """`docker save` of several images as one stream (shared layers once); the SDK saves one image only."""
    api = client.api
    response = api._get(api._url("/images/get"), params={"names": image_ids}, stream=True)
    api._raise_for_status(response)
    yield from response.iter_content(CHUNK)


@dataclass
class Counter:
    """Passes a byte stream through, counting it, with a progress line at most every `interval` seconds."""

    label: str
    expected: int
    out: TextIO
    interval: float = 2.0
    bytes: int = 0

    def follow(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        start = last = time.monotonic()
        for chunk in chunks:
            self.bytes += len(chunk)
            now = time.monotonic()
            if now - last >= self.interval:
                last = now
                show(
                    self.out,
                    f"  {self.label}: {self.bytes / MB:.1f} of ~{self.expected / MB:.1f} MB, "
                    f"{self.bytes / MB / (now - start):.1f} MB/s",
                )
            yield chunk
        show(self.out, "")


def _load(remote: docker.DockerClient, stream: Iterable[bytes], host: str) -> None:
    """The box's `docker load` of `stream`; a TankError with its reason when it fails."""
    fix = (
        f"nothing was tagged on {host}; check the connection and that box's free disk "
        f"(docker -H {host} info), then push again"
    )
    try:
        for event in remote.api.load_image(stream):
            if "error" in event:
                raise TankError(f"loading into {host} failed: {str(event['error']).strip()}", fix)
    except TankError:
        raise
    except Exception as exc:  # the transport's failures (ssh gone, pipe closed) have no common type
        raise TankError(f"loading into {host} failed: {type(exc).__name__}: {exc}", fix) from None


def _untagged(remote: docker.DockerClient, image_ids: Iterable[str]) -> None:
    """Remove those of `image_ids` the box has without a tag (what a failed push loaded), as far as it can."""
    for image_id in image_ids:
        with contextlib.suppress(Exception):
            if not remote.images.get(image_id).tags:
                remote.images.remove(image_id)


def push_to_host(
    url: str,
    variant: str,
    namespace: str = NAMESPACE,
    tls: TlsOptions | None = None,
    client: docker.DockerClient | None = None,
    out: TextIO | None = None,
    keep_old: bool = False,
) -> Sent:
    """Send the variant's chain to the engine at `url`: the images it lacks, then every name, all or none."""
    out = out or sys.stderr
    tls = tls or TlsOptions()
    check_host(url, tls)
    client = client or get_client()
    items = chain_items(client, variant, namespace)
    remote = connect(url, tls, timeout=TIMEOUT)
    done = Sent(url)
    for item in items:
        (done.there if image_exists(remote, item.image_id) else done.sent).append(item)
        state = "already there" if item in done.there else "to send"
        print(f"  {item.name} {item.image_id[:19]}: {state}", file=out, flush=True)
    start = time.monotonic()
    if done.sent:
        counter = Counter(f"push {url}", max(i.size for i in done.sent), out)
        ids = [i.image_id for i in done.sent]
        try:
            _load(remote, counter.follow(_save(client, ids)), url)
            lost = [i.name for i in done.sent if not image_exists(remote, i.image_id)]
            if lost:
                raise TankError(
                    f"after the load, {url} lacks {', '.join(lost)}",
                    "push again; if it persists, check that engine's log",
                )
        except BaseException:
            _untagged(remote, ids)
            raise
        done.bytes = counter.bytes
    done.seconds = time.monotonic() - start
    for item in items:
        for ref in item.refs:
            remote.images.get(item.image_id).tag(*ref.rsplit(":", 1))
    if not keep_old:
        for item in (i for i in items if i.stage):
            for line in retire_superseded(remote, item.stage, variant, item.refs[0], namespace).lines(url):
                print(line, file=out, flush=True)
    return done
