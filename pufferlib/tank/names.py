"""What PufferTank calls things in Docker: image references, content-hash tags and labels.

The one place image names are built; everything else (build, run, matrix, doctor) asks here.
"""

from __future__ import annotations

import re

NAMESPACE = "puffertank"
STAGES = ("base", "envs", "lib")  # in build order: each stage builds FROM the one before
VARIANTS = ("cpu", "cuda")

MANAGED_LABEL = "puffertank.managed"  # on every container puffertank starts
HASH_LABEL = "puffertank.content-hash"  # on every stage image: the hash of its inputs
STAGE_LABEL = "puffertank.stage"
VARIANT_LABEL = "puffertank.variant"
CUDA_LABEL = "puffertank.cuda-version"  # the CUDA torch was built for ("none" in the cpu variant)
UID_LABEL = "puffertank.uid"
PARENT_LABEL = "org.opencontainers.image.base.name"  # on every stage image: the image it was built FROM


def image_ref(stage: str, variant: str, namespace: str = NAMESPACE) -> str:
    """`puffertank/lib:cpu` and friends: NAMESPACE/STAGE:VARIANT."""
    return f"{namespace}/{stage}:{variant}"


def hash_ref(stage: str, variant: str, content_hash: str, namespace: str = NAMESPACE) -> str:
    """The content-hash tag of a stage image, e.g. `puffertank/lib:cpu-1a2b3c4d5e6f`."""
    return f"{image_ref(stage, variant, namespace)}-{content_hash[:12]}"


def hash_ref_pattern(stage: str, variant: str, namespace: str = NAMESPACE) -> re.Pattern[str]:
    """Matches every content-hash tag `hash_ref` makes for this stage and variant."""
    return re.compile(rf"^{re.escape(image_ref(stage, variant, namespace))}-[0-9a-f]{{12}}$")


DEBIAN_BASE = image_ref("debian", "bookworm")  # made locally with debootstrap when no registry answers
