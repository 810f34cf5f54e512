"""`puffertank build --pull-from HOST:PORT`: stages the fleet's registry already has are pulled, not built.

A stage whose content hash (its inputs, and the stage below it: build/plan.py) is already in the registry
under its content-hash tag is pulled by digest and tagged, so box 2..N of a fleet build nothing that box 1
built. The hash of base covers the image id of the Debian base under it, which a locally made (debootstrap)
base does not share between boxes: so first the Debian base the registry's base stage was built on is pulled
and tagged under its name (push sends it along; its layers are base's own), replacing a locally made one.
"""

from __future__ import annotations

import sys

import docker
from docker.models.images import Image

from pufferlib.tank import registry as reg
from pufferlib.tank.build.debian import Log
from pufferlib.tank.build.plan import StagePlan
from pufferlib.tank.names import HASH_LABEL, PARENT_LABEL, image_ref
from pufferlib.tank.transfer import Meter, fetch


class RegistryStages:
    """The registry `address` as a source of stage images for a build of `variant` under `namespace`."""

    def __init__(
        self, address: str, client: docker.DockerClient, variant: str, namespace: str, log: Log
    ) -> None:
        self.remote = reg.Registry(address)
        self.remote.ping()
        self.client = client
        self.variant = variant
        self.namespace = namespace
        self.log = log
        self.meter = Meter("pull", sys.stderr)

    def align_debian_base(self) -> None:
        """Pull the image the registry's base stage was built on, unless this engine has it under its name."""
        base = image_ref("base", self.variant, self.namespace)
        there = self.remote.remote(*base.rsplit(":", 1))
        parent = (there.labels.get(PARENT_LABEL, "") if there else "") or ""
        if ":" not in parent.rsplit("/", 1)[-1]:
            return
        parent_there = self.remote.remote(*parent.rsplit(":", 1))
        if parent_there is None:
            self.log(
                f"  {self.remote.address} has {base} but not the {parent} under it: base is planned here"
            )
            return
        try:
            if self.client.images.get(parent).id == parent_there.config_digest:
                return
        except docker.errors.ImageNotFound:
            pass
        image, moved = fetch(self.client, self.remote, self.meter, parent.rsplit(":", 1)[0], parent_there)
        image.tag(*parent.rsplit(":", 1))
        self.log(
            f"  {parent} is now the fleet's ({image.id[:19]}, from {self.remote.address}; "
            f"{moved.bytes / 1e6:.1f} MB moved), so base's hash can match the registry's"
        )

    def stage(self, plan: StagePlan) -> Image | None:
        """The stage's image pulled from the registry when it has this content hash, else None."""
        name, tag = plan.hash_tag.rsplit(":", 1)
        there = self.remote.remote(name, tag)
        if there is None or there.labels.get(HASH_LABEL) != plan.content_hash:
            return None
        image, moved = fetch(self.client, self.remote, self.meter, name, there)
        self.log(
            f"  {plan.stage.name:<4} pulled {plan.hash_tag} from {self.remote.address} "
            f"({len(moved.moved_ids)} layers, {moved.bytes / 1e6:.1f} MB moved in {moved.seconds:.1f} s)"
        )
        return image
