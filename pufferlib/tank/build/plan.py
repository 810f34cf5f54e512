"""The stages and their plans: what each stage's build context holds, its content hash, labels and parent.

`plan_chain()` is the one recipe: `puffertank build` executes its plans, `puffertank doctor` reads their
hashes to say whether the images are behind the source. A stage's content hash covers its Dockerfile, the
files of its build context (with their executable bits), its build arguments and its parent: the Debian
base's image id for base, the content hash of the stage below for envs and lib. So the whole chain is
planned before anything builds, and a stage whose hash is already an image is reused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pufferlib.tank.build.resolve import TorchChoice
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import (
    CUDA_LABEL,
    HASH_LABEL,
    PARENT_LABEL,
    STAGE_LABEL,
    STAGES,
    UID_LABEL,
    VARIANT_LABEL,
    hash_ref,
    image_ref,
)
from pufferlib.tank.source import dockerfile

HASH_SCHEME = "puffertank-stage-v1"  # bump to invalidate every stage hash
CA_SECRET_ID = "pip_ca"  # the BuildKit secret the Dockerfiles mount for pip


@dataclass(frozen=True)
class Stage:
    name: str
    parent_arg: str  # the build arg naming the image below
    context: tuple[str, ...]  # paths inside the source tree that this stage's build context holds
    optional: tuple[str, ...] = ()  # context paths that may be absent
    cuda_only: tuple[str, ...] = ()  # left out of the cpu variant's context (and hash)

    @property
    def dockerfile(self) -> str:
        return dockerfile(self.name)


STAGE_SPECS: dict[str, Stage] = {
    "base": Stage(
        "base",
        "BASE_IMAGE",
        (
            "docker/constraints/base.txt",
            "docker/constraints/cuda.txt",
            "docker/install-torch.sh",
            "docker/install-cuda-toolchain.sh",
            "docker/slim_site.py",
            "docker/check_base.py",
            "docker/login-env.sh",
        ),
        cuda_only=("docker/constraints/cuda.txt", "docker/install-cuda-toolchain.sh"),
    ),
    "envs": Stage(
        "envs",
        "BASE_IMAGE",
        (
            "docker/constraints/base.txt",
            "docker/constraints/envs.txt",
            "docker/install-envs.sh",
            "docker/slim_site.py",
            "docker/check_envs.py",
            "docker/login-env.sh",
            # The JAX families' programs the stage builds into the image (self-contained, with jax_cache.py).
            "pufferlib/environments/support/jax_cache.py",
            "pufferlib/environments/support/craftax_jax.py",
            "pufferlib/environments/support/kinetix_jax.py",
        ),
    ),
    "lib": Stage(
        "lib",
        "ENVS_IMAGE",
        (
            "pyproject.toml",
            "README.md",
            "pufferlib",
            "docker/bashrc",
            "docker/entrypoint.sh",
            "docker/install-pufferlib.sh",
            "docker/check_lib.py",
            "docker/catalog_sources.py",
            "docker/login-env.sh",  # rewrites the login profile after the stage's ENV (PUFFER_PL3_HOME)
            "docker/install-lab.sh",
            "docker/install-envs.sh",  # install-lab.sh sources its check_requirements
            "docker/constraints/base.txt",
            "docker/constraints/envs.txt",
            "docker/constraints/lib.txt",
        ),
        optional=("README.md",),
    ),
}
assert tuple(STAGE_SPECS) == STAGES

_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".so")  # .so: native envs built in place here; the image compiles its own


def _walk_files(root: Path, rel: str) -> Iterable[tuple[str, Path]]:
    path = root / rel
    if path.is_file():
        yield rel, path
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            if not name.endswith(_SKIP_SUFFIXES):
                full = Path(dirpath) / name
                yield full.relative_to(root).as_posix(), full


def stage_files(source: Path, stage: Stage, variant: str) -> list[tuple[str, Path]]:
    """(path in the build context, path on the host) of every file the stage reads."""
    files: list[tuple[str, Path]] = []
    for rel in stage.context:
        if variant != "cuda" and rel in stage.cuda_only:
            continue
        if not (source / rel).exists():
            if rel in stage.optional:
                continue
            raise TankError(
                f"{source / rel} is missing; the {stage.name} stage needs it",
                "is the checkout complete? (git status)",
            )
        files.extend(_walk_files(source, rel))
    return files


def _file_digest(path: Path) -> str:
    stat = path.stat()
    if stat.st_size > 16 << 20:  # big wheels: name, size and mtime are enough to notice a change
        return f"size={stat.st_size},mtime={stat.st_mtime_ns}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content_hash(
    stage: Stage, source: Path, files: list[tuple[str, Path]], args: dict[str, str], parent: str
) -> str:
    """Hash of everything that shapes the image: not the CA bundle, not the tag names, not the time."""
    h = hashlib.sha256()
    h.update(f"{HASH_SCHEME}\n{stage.name}\n".encode())
    h.update((source / stage.dockerfile).read_bytes())
    for rel, path in sorted(files):
        h.update(f"\nfile {rel} {_file_digest(path)} {path.stat().st_mode & 0o111:o}".encode())
    for key, value in sorted(args.items()):
        if key != stage.parent_arg:
            h.update(f"\narg {key}={value}".encode())
    h.update(f"\nparent {parent}".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Parent:
    """The image a stage builds FROM."""

    ref: str  # what the build argument names
    identity: str  # what the hash records: the Debian base's image id, or the content hash of the stage below


@dataclass(frozen=True)
class StagePlan:
    """Everything building one stage takes; `puffertank build` runs it as it is."""

    stage: Stage
    tag: str  # NAMESPACE/STAGE:VARIANT
    hash_tag: str  # the same with the content hash, e.g. puffertank/lib:cpu-1a2b3c4d5e6f
    content_hash: str
    parent: Parent
    files: tuple[tuple[str, Path], ...]  # (path in the context, path on the host)
    build_args: dict[str, str]
    labels: dict[str, str]
    secret: Path | None  # the CA bundle, handed to pip as a BuildKit secret (never in a layer)


@dataclass(frozen=True)
class ChainInputs:
    """What a chain's plans depend on, resolved: where the source is, which stages on top of what."""

    source: Path
    variant: str
    namespace: str
    stages: Sequence[str]  # consecutive stages in build order, e.g. ("base", "envs", "lib") or ("lib",)
    parent: Parent  # the image below the first stage
    torch: TorchChoice | None = None  # needed when the base stage is planned
    ca: Path | None = None
    uid: int = 1000
    gid: int = 1000


def plan_chain(inputs: ChainInputs) -> list[StagePlan]:
    """The plans of inputs.stages, each on top of the one before, with their content hashes."""
    if list(inputs.stages) != list(STAGES[STAGES.index(inputs.stages[0]) :][: len(inputs.stages)]):
        raise ValueError(f"stages must be consecutive in build order: {inputs.stages}")
    created = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    common = {
        "org.opencontainers.image.version": _project_version(inputs.source),
        "org.opencontainers.image.created": created,
    }
    if revision := _git_revision(inputs.source):
        common["org.opencontainers.image.revision"] = revision
    plans: list[StagePlan] = []
    parent = inputs.parent
    for name in inputs.stages:
        stage = STAGE_SPECS[name]
        files = stage_files(inputs.source, stage, inputs.variant)
        args = {stage.parent_arg: parent.ref, "VARIANT": inputs.variant}
        labels = {
            **common,
            STAGE_LABEL: name,
            VARIANT_LABEL: inputs.variant,
            PARENT_LABEL: parent.ref,
        }
        if name == "base":  # only base reads these; envs and lib inherit its labels
            if inputs.torch is None:
                raise ValueError("planning the base stage needs the torch choice")
            files += [(f"docker/wheelhouse/{w.name}", w) for w in inputs.torch.wheels]
            args |= {
                "TORCH_SPEC": inputs.torch.spec,
                "TORCH_INDEX": inputs.torch.index,
                "CUDA_VERSION": inputs.torch.cuda_version,
                "USER_UID": str(inputs.uid),
                "USER_GID": str(inputs.gid),
            }
            labels |= {
                CUDA_LABEL: inputs.torch.cuda_version,
                "puffertank.torch": inputs.torch.spec.split("==", 1)[1],
                UID_LABEL: str(inputs.uid),
                "puffertank.gid": str(inputs.gid),
                "puffertank.debian-base": parent.ref,
                "puffertank.debian-base-id": parent.identity,
            }
        digest = content_hash(stage, inputs.source, files, args, parent.identity)
        labels[HASH_LABEL] = digest
        hash_tag = hash_ref(name, inputs.variant, digest, inputs.namespace)
        plans.append(
            StagePlan(
                stage=stage,
                tag=image_ref(name, inputs.variant, inputs.namespace),
                hash_tag=hash_tag,
                content_hash=digest,
                parent=parent,
                files=tuple(files),
                build_args=args,
                labels=labels,
                secret=inputs.ca,
            )
        )
        parent = Parent(hash_tag, digest)
    return plans


def stage_context(plan: StagePlan, source: Path) -> Path:
    """A fresh directory holding exactly the hashed files (hard links where possible; wheels are big)."""
    context = Path(tempfile.mkdtemp(prefix=f"puffertank-{plan.stage.name}-context-"))
    for rel, path in plan.files:
        dest = context / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, dest)
        except OSError:
            shutil.copy2(path, dest)
    (context / "docker" / "wheelhouse").mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / plan.stage.dockerfile, context / plan.stage.dockerfile)
    return context


def _git_revision(source: Path) -> str:
    try:
        res = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return res.stdout.strip() if res.returncode == 0 else ""


def _project_version(source: Path) -> str:
    """The source tree's version (its pufferlib/_version.py, read without importing it), "0" if none."""
    try:
        found = re.search(
            r'^__version__ = "([^"]+)"', (source / "pufferlib" / "_version.py").read_text(), re.M
        )
    except OSError:
        return "0"
    return found.group(1) if found else "0"
