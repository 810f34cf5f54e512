"""Do the local images match the source? The verdict `puffertank doctor` reports, from the plan a build
would execute (build.plan.plan_chain), so doctor and `puffertank build` cannot disagree."""

from __future__ import annotations

from pathlib import Path

import docker  # docker.errors comes with it

from pufferlib.tank.build.plan import ChainInputs, Parent, plan_chain
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import HASH_LABEL, NAMESPACE, STAGES, image_ref
from pufferlib.tank.source import find_source_tree


def local_image(client: docker.DockerClient, ref: str) -> docker.models.images.Image | None:
    """The local image `ref`, or None when the engine has none by that name."""
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


def freshness(
    client: docker.DockerClient, variant_name: str, namespace: str = NAMESPACE, source: Path | None = None
) -> dict[str, str | None]:
    """Per stage: 'current' or 'stale' (a build would rebuild it), None when there is no verdict.

    Reads the hashes of the same plan `puffertank build` executes (build.plan.plan_chain), put on top of
    the base image that is there. Base itself gets no verdict: its hash depends on how torch was resolved
    (index, wheelhouse), which only a build knows. No checkout or no base image: no verdict at all.
    """
    verdict: dict[str, str | None] = dict.fromkeys(STAGES)
    base = local_image(client, image_ref("base", variant_name, namespace))
    if base is None or not base.labels.get(HASH_LABEL):
        return verdict
    try:
        tree = find_source_tree(source)
        plans = plan_chain(
            ChainInputs(
                source=tree,
                variant=variant_name,
                namespace=namespace,
                stages=STAGES[1:],
                parent=Parent(image_ref("base", variant_name, namespace), base.labels[HASH_LABEL]),
            )
        )
    except TankError:
        return verdict  # no checkout here, or an incomplete one
    for plan in plans:
        image = local_image(client, plan.tag)
        if image is not None:
            verdict[plan.stage.name] = (
                "current" if image.labels.get(HASH_LABEL) == plan.content_hash else "stale"
            )
    return verdict
