"""The image chain to and from the fleet's registry (`puffertank push` / `pull`, tank/pushpull.py).

push sends base, envs and lib of a variant (the chain the local lib image was built on, followed through each
stage's parent label), each under its content-hash tag and the moving variant tag; the engine sends only the
layers the registry lacks, so after a lib edit only lib's changed layers move. pull reads the chain from the
registry, pulls each stage by its manifest digest, checks that the image id the engine made is the config
digest the registry named, and only when every stage is in tags them with the usual local names
(`puffertank/lib:cpu`, `puffertank/lib:cpu-<hash>`), so run/shell/matrix/build find them. A failure on the way
leaves the local names as they were; then the content-hash tags the pulled chain supersedes are untagged
(tank/stages.py). Both show progress while the layers move (layers, bytes, speed).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

import docker
from docker.models.images import Image

from pufferlib.tank import registry as reg
from pufferlib.tank.engine import get_client
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import HASH_LABEL, NAMESPACE, PARENT_LABEL, STAGE_LABEL, STAGES, hash_ref, image_ref
from pufferlib.tank.stages import Link, local_chain, retire_superseded

MB = 1e6


def _tag_of(ref: str) -> str:
    return ref.rsplit(":", 1)[1]


def _repo_of(ref: str) -> str:
    return ref.rsplit(":", 1)[0]


@dataclass
class Moved:
    """What one push or pull of one image moved."""

    ref: str
    layers: int = 0
    moved_ids: tuple[str, ...] = ()  # the layers that moved (the others were there already)
    bytes: int = 0
    seconds: float = 0.0

    def line(self, verb: str) -> str:
        speed = f", {self.bytes / MB / self.seconds:.1f} MB/s" if self.seconds > 0 and self.bytes else ""
        sent = len(self.moved_ids)
        return (
            f"  {verb} {self.ref}: {sent} of {self.layers} layers moved ({self.bytes / MB:.1f} MB), "
            f"{self.layers - sent} already there, {self.seconds:.1f} s{speed}"
        )


@dataclass
class Meter:
    """Follows the engine's push/pull events: a progress line (layers, bytes, speed) at most every
    `interval` seconds (rewritten in place on a terminal), and which layers moved."""

    verb: str
    out: TextIO = field(default_factory=lambda: sys.stderr)
    interval: float = 2.0

    def follow(self, events: Iterable[dict], ref: str, layers: Iterable[str]) -> Moved:
        """`layers`: the short ids the engine's events name this image's layers by."""
        layers = list(layers)
        start = last = time.monotonic()
        current: dict[str, int] = {}
        total: dict[str, int] = {}
        state: dict[str, str] = {}  # short id -> "moving", "moved" or "there"
        for event in events:
            if "error" in event:
                raise TankError(f"{self.verb} {ref} failed: {str(event['error']).strip()}", "")
            layer, status = event.get("id", ""), event.get("status", "")
            if layer not in layers:
                continue
            if status in ("Pushing", "Downloading"):
                detail = event.get("progressDetail") or {}
                current[layer] = int(detail.get("current") or 0)
                total[layer] = int(detail.get("total") or 0)
                state[layer] = "moving"
            elif status in ("Pushed", "Pull complete", "Download complete"):
                state[layer] = "moved"
            elif status in ("Layer already exists", "Already exists") or status.startswith("Mounted from"):
                state.setdefault(layer, "there")
            now = time.monotonic()
            if now - last >= self.interval:
                last = now
                moving = [k for k, v in state.items() if v != "there"]
                done = sum(state[k] == "moved" for k in moving)
                got = sum(current.get(k, 0) for k in moving)
                need = sum(max(total.get(k, 0), current.get(k, 0)) for k in moving)
                text = (
                    f"  {self.verb} {ref}: {done}/{len(moving)} layers, {got / MB:.1f}/{need / MB:.1f} MB, "
                    f"{got / MB / (now - start):.1f} MB/s"
                )
                show(self.out, text)
        show(self.out, "")
        moved = tuple(k for k in layers if state.get(k) == "moved")
        return Moved(ref, len(layers), moved, 0, time.monotonic() - start)


def show(out: TextIO, text: str) -> None:
    """A progress line: rewritten in place on a terminal ("" clears it), one line each elsewhere ("" none)."""
    if out.isatty():
        print(f"\r{text}\033[K", end="", file=out, flush=True)
    elif text:
        print(text, file=out, flush=True)


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]


def _follow(meter: Meter, events: Iterable[dict], ref: str, layers: Iterable[str], registry: str) -> Moved:
    """meter.follow, with the engine's failures turned into TankErrors that name the registry."""
    fix = (
        f"check that this Docker engine reaches {registry} (a registry on another box must be in the "
        "daemon's insecure-registries, or serve TLS: docs/fleet.md)"
    )
    try:
        return meter.follow(events, ref, layers)
    except TankError as exc:
        if "verification failed" in exc.message or "digest" in exc.message.split("failed:", 1)[-1]:
            fix = (
                "the registry's copy does not match its digest (damaged or tampered; nothing was tagged "
                "here): push the chain again from the box that built it "
                f"(puffertank push --registry {registry})"
            )
        raise TankError(exc.message, fix) from None
    except docker.errors.APIError as exc:
        raise TankError(f"{meter.verb} {ref} failed: {exc.explanation or exc}", fix) from None


def _push_image(
    client: docker.DockerClient,
    remote: reg.Registry,
    meter: Meter,
    image: Image,
    refs: list[str],
) -> Moved:
    """Push `image` under each of `refs` (REGISTRY/NAME:TAG), check the registry has it, untag them here;
    what moved is the first ref's (the others move only a manifest)."""
    registry = remote.address
    diff_ids = [_short(d) for d in image.attrs["RootFS"]["Layers"]]  # push names layers by these
    moved = None
    try:
        for ref in refs:
            image.tag(_repo_of(ref), _tag_of(ref))
        for ref in refs:
            events = client.api.push(_repo_of(ref), tag=_tag_of(ref), stream=True, decode=True)
            result = _follow(meter, events, ref, diff_ids, registry)
            there = remote.remote(_repo_of(ref).removeprefix(f"{registry}/"), _tag_of(ref))
            if there is None or there.config_digest != image.id:
                got = there.config_digest if there else "nothing"
                raise TankError(
                    f"after the push, {ref} in the registry is {got}, not the local {image.id}",
                    "push again; if it persists, another push of the same tag raced this one",
                )
            if moved is None:
                size = dict(zip(diff_ids, (s for _, s in there.layers), strict=False))
                result.bytes = sum(size.get(k, 0) for k in result.moved_ids)
                print(result.line("pushed"), file=meter.out, flush=True)
                moved = result
    finally:
        for ref in refs:  # the registry's names are not kept locally: the usual names stay the only ones
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(ref, noprune=True)
    assert moved is not None
    return moved


def push(
    registry: str,
    variant: str,
    namespace: str = NAMESPACE,
    client: docker.DockerClient | None = None,
    out: TextIO | None = None,
) -> list[Moved]:
    """Push the variant's chain to `registry`: base, envs, lib, each with its content-hash and variant tag;
    and the image base was built on (e.g. the locally made Debian base: its layers are base's own, so it
    costs a manifest), so `puffertank build --pull-from` on another box plans on the same parent."""
    out = out or sys.stderr
    remote = reg.Registry(registry)
    remote.ping()
    client = client or get_client()
    chain = local_chain(client, variant, namespace)
    meter = Meter("push", out)
    moved: list[Moved] = []
    target = f"{registry}/{namespace}"
    for link in chain:
        image = client.images.get(link.image_id)
        refs = [
            hash_ref(link.stage, variant, link.content_hash, target),
            image_ref(link.stage, variant, target),
        ]
        moved.append(_push_image(client, remote, meter, image, refs))
    parent = (client.images.get(chain[0].image_id).labels or {}).get(PARENT_LABEL, "")
    if ":" in parent.rsplit("/", 1)[-1]:  # a NAME:TAG (not scratch, not an id)
        with contextlib.suppress(docker.errors.ImageNotFound):
            _push_image(client, remote, meter, client.images.get(parent), [f"{registry}/{parent}"])
    return moved


def remote_chain(
    remote: reg.Registry, variant: str, namespace: str = NAMESPACE
) -> list[tuple[Link, reg.Remote]]:
    """base, envs and lib as the registry has them under lib:VARIANT, through each stage's parent label."""
    ref = image_ref("lib", variant, namespace)
    there = remote.remote(_repo_of(ref), _tag_of(ref))
    if there is None:
        raise TankError(
            f"registry {remote.address} has no {ref}",
            "push it from the box that built it: "
            f"puffertank push --registry {remote.address} --variant {variant}",
        )
    chain: list[tuple[Link, reg.Remote]] = []
    for stage in reversed(STAGES):
        labels = there.labels
        if labels.get(STAGE_LABEL) != stage or not labels.get(HASH_LABEL):
            raise TankError(
                f"{remote.address}/{ref} is not puffertank's {stage} stage ({labels.get(STAGE_LABEL)})",
                f"push the chain again: puffertank push --registry {remote.address} --variant {variant}",
            )
        chain.insert(0, (Link(stage, labels[HASH_LABEL], there.config_digest), there))
        if stage == "base":
            break
        ref = labels.get(PARENT_LABEL, "")
        there = remote.remote(_repo_of(ref), _tag_of(ref)) if ":" in ref else None
        if there is None:
            raise TankError(
                f"registry {remote.address} lacks {ref or 'the parent'} of its {stage} image",
                f"push the whole chain: puffertank push --registry {remote.address} --variant {variant}",
            )
    return chain


def fetch(
    client: docker.DockerClient, remote: reg.Registry, meter: Meter, name: str, there: reg.Remote
) -> tuple[Image, Moved]:
    """Pull NAME (a repository in the registry) at the manifest `there` names, by digest, and check that the
    image the engine made is the registry's config. The image is left untagged (its RepoDigest names it)."""
    repo = f"{remote.address}/{name}"
    ref = f"{repo}@{there.manifest_digest}"
    layers = [_short(d) for d, _ in there.layers]  # pull names layers by their compressed digest
    events = client.api.pull(repo, tag=there.manifest_digest, stream=True, decode=True)
    result = _follow(meter, events, ref, layers, remote.address)
    image = client.images.get(ref)
    if image.id != there.config_digest:
        raise TankError(
            f"the engine made {image.id} of {ref}, not the registry's config {there.config_digest}",
            f"push the chain again from the box that built it (puffertank push --registry {remote.address})",
        )
    size = dict(zip(layers, (s for _, s in there.layers), strict=True))
    result.bytes = sum(size[k] for k in result.moved_ids)
    return image, result


def pull(
    registry: str,
    variant: str,
    namespace: str = NAMESPACE,
    client: docker.DockerClient | None = None,
    out: TextIO | None = None,
    keep_old: bool = False,
) -> list[Moved]:
    """Pull the variant's chain from `registry` and tag it with the local names, all or nothing; then
    untag the content-hash tags it supersedes (retire_superseded) unless `keep_old`."""
    out = out or sys.stderr
    remote = reg.Registry(registry)
    remote.ping()
    chain = remote_chain(remote, variant, namespace)
    client = client or get_client()
    meter = Meter("pull", out)
    moved: list[Moved] = []
    pulled: list[tuple[Link, Image]] = []
    try:
        for link, there in chain:
            image, result = fetch(client, remote, meter, f"{namespace}/{link.stage}", there)
            result.ref = hash_ref(link.stage, variant, link.content_hash, f"{registry}/{namespace}")
            print(result.line("pulled"), file=out, flush=True)
            moved.append(result)
            pulled.append((link, image))
    except BaseException:
        for _, image in pulled:  # nothing half-tagged: what this pull fetched goes with its failure
            with contextlib.suppress(docker.errors.APIError):
                if not client.images.get(image.id).tags:
                    client.images.remove(image.id)
        raise
    for link, image in pulled:
        for ref in (
            image_ref(link.stage, variant, namespace),
            hash_ref(link.stage, variant, link.content_hash, namespace),
        ):
            image.tag(_repo_of(ref), _tag_of(ref))
    if not keep_old:
        for link, _ in pulled:
            current = hash_ref(link.stage, variant, link.content_hash, namespace)
            for line in retire_superseded(client, link.stage, variant, current, namespace).lines():
                print(line, file=out, flush=True)
    return moved
