"""The stage images of a variant in one engine: the chain under the lib image, and the content-hash tags a
newer chain supersedes.

`puffertank build` retires superseded tags after each stage, and `puffertank pull` / `push --host` after
tagging what they brought (each with `--keep-old` to keep them), so old images (GBs for base) can be freed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import docker

from pufferlib.tank.engine import require_image
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import (
    HASH_LABEL,
    NAMESPACE,
    PARENT_LABEL,
    STAGE_LABEL,
    STAGES,
    hash_ref_pattern,
    image_ref,
)


@dataclass(frozen=True)
class Link:
    """One stage image of a chain: the local image (push) or the registry's (pull)."""

    stage: str
    content_hash: str
    image_id: str  # the config digest


def local_chain(client: docker.DockerClient, variant: str, namespace: str = NAMESPACE) -> list[Link]:
    """base, envs and lib under the local lib image of `variant`, found through each stage's parent label."""
    build = f"puffertank build --variant {variant}"
    image = require_image(client, image_ref("lib", variant, namespace), build)
    chain: list[Link] = []
    for stage in reversed(STAGES):
        labels = image.labels or {}
        if labels.get(STAGE_LABEL) != stage or not labels.get(HASH_LABEL):
            found = labels.get(STAGE_LABEL, "no stage label")
            raise TankError(
                f"{image.tags[0] if image.tags else image.id[:19]} is not puffertank's {stage} stage "
                f"({found})",
                f"{build} (push sends the chain puffertank build made)",
            )
        chain.insert(0, Link(stage, labels[HASH_LABEL], image.id))
        if stage == "base":
            break
        parent = labels.get(PARENT_LABEL, "")
        try:
            image = client.images.get(parent)
        except docker.errors.ImageNotFound:
            raise TankError(
                f"the {stage} image's parent {parent or '(unlabelled)'} is not in the local engine",
                build,
            ) from None
    return chain


@dataclass
class Retired:
    """What retire_superseded did: tags removed, and tags kept because a container uses their image."""

    removed: list[str] = field(default_factory=list)
    in_use: list[str] = field(default_factory=list)

    def lines(self, where: str = "") -> list[str]:
        at = f" on {where}" if where else ""
        return [f"  removed superseded {t}{at}" for t in self.removed] + [
            f"  kept superseded {t}{at}: a container uses it (remove the container to free it)"
            for t in self.in_use
        ]


def retire_superseded(
    client: docker.DockerClient, stage: str, variant: str, current: str, namespace: str = NAMESPACE
) -> Retired:
    """Untag the content-hash tags of `stage` and `variant` other than `current` (a hash_ref), unless a
    container (running or stopped) uses the image; Docker frees an image when its last tag goes."""
    pattern = hash_ref_pattern(stage, variant, namespace)
    used = {c.get("ImageID") for c in client.api.containers(all=True)}
    done = Retired()
    for image in client.images.list(name=image_ref(stage, variant, namespace).rsplit(":", 1)[0]):
        for tag in image.tags:
            if not pattern.match(tag) or tag == current:
                continue
            if image.id in used:
                done.in_use.append(tag)
                continue
            try:
                client.images.remove(tag)
                done.removed.append(tag)
            except docker.errors.APIError:  # a container made since the list above
                done.in_use.append(tag)
    return done
