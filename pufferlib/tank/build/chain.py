"""`build_chain()`: execute the chain's plans in order under the machine-wide build lock.

A stage whose content hash is already an image is reused (tagged, not rebuilt); the others go through
BuildKit with their plan's arguments, labels and CA secret. Superseded content-hash tags are untagged so
old images (GBs for base) can be freed.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import docker  # docker.errors comes with it
from docker.models.images import Image

from pufferlib.tank.build import timings
from pufferlib.tank.build.buildkit import BuildCli, find_build_cli, run_buildkit
from pufferlib.tank.build.debian import Log, log_stderr, resolve_base_image
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.build.plan import CA_SECRET_ID, ChainInputs, Parent, StagePlan, plan_chain, stage_context
from pufferlib.tank.build.pull_from import RegistryStages
from pufferlib.tank.build.resolve import pip_settings, resolve_ca_bundle, resolve_torch
from pufferlib.tank.engine import get_client
from pufferlib.tank.errors import TankError
from pufferlib.tank.locks import machine_lock
from pufferlib.tank.names import HASH_LABEL, STAGE_LABEL
from pufferlib.tank.paths import cache_dir
from pufferlib.tank.source import find_source_tree
from pufferlib.tank.stages import retire_superseded


@dataclass
class StageResult:
    stage: str
    status: str  # "built", "reused" (here already) or "pulled" (from --pull-from's registry)
    tag: str
    hash_tag: str
    image_id: str
    content_hash: str
    seconds: float
    steps: int = 0  # RUN/COPY steps BuildKit ran or took from its cache (built stages only)
    cached: int = 0


@dataclass
class ChainResult:
    variant: str
    namespace: str
    stages: dict[str, StageResult]
    seconds: float
    no_cache: bool

    def tag(self, stage: str = "lib") -> str:
        return self.stages[stage].tag

    def hash_tag(self, stage: str = "lib") -> str:
        return self.stages[stage].hash_tag

    def record(self) -> dict:
        """What timings.py keeps of this build."""
        return {
            "variant": self.variant,
            "namespace": self.namespace,
            "no_cache": self.no_cache,
            "seconds": round(self.seconds, 2),
            "stages": {
                n: {"status": r.status, "seconds": round(r.seconds, 2), "steps": r.steps, "cached": r.cached}
                for n, r in self.stages.items()
            },
        }


def build_chain(
    opts: BuildOptions, client: docker.DockerClient | None = None, log: Log = log_stderr
) -> ChainResult:
    """Build (or reuse) the stages up to opts.stage, in order, and tag them. Serialized per machine."""
    opts.validate()
    source = find_source_tree(opts.source)
    pip = pip_settings()
    ca = resolve_ca_bundle(opts, pip)
    torch = resolve_torch(opts, source, pip)
    client = client or get_client()  # after every check of the options: a wrong one is named, not the engine
    fleet = None
    if opts.pull_from:
        fleet = RegistryStages(opts.pull_from, client, opts.variant, opts.namespace, log)
    start = time.monotonic()
    with machine_lock("build", waiting_message="puffertank: waiting for another puffertank build to finish"):
        if fleet is not None:
            fleet.align_debian_base()
        debian = resolve_base_image(client, opts.base_image, log)
        inputs = ChainInputs(
            source=source,
            variant=opts.variant,
            namespace=opts.namespace,
            stages=opts.targets(),
            parent=Parent(debian, client.images.get(debian).id),
            torch=torch,
            ca=ca,
            uid=opts.uid,
            gid=opts.gid,
        )
        log(
            f"puffertank build: variant {opts.variant}, stages {' -> '.join(inputs.stages)}, on {debian}; "
            f"{torch.note}; CA bundle for pip: {ca or 'none (pip defaults)'}"
        )
        results: dict[str, StageResult] = {}
        cli: BuildCli | None = None
        for plan in plan_chain(inputs):
            existing = None if opts.no_cache else _find_by_hash(client, plan.stage.name, plan.content_hash)
            pulled = None if existing is not None or fleet is None else fleet.stage(plan)
            if existing is not None:
                results[plan.stage.name] = _reuse(plan, existing, log)
            elif pulled is not None:
                results[plan.stage.name] = _reuse(plan, pulled, log, "pulled")
            else:
                cli = cli or find_build_cli()
                results[plan.stage.name] = _build(plan, source, cli, client, opts, log)
            if not opts.keep_old:
                retired = retire_superseded(
                    client, plan.stage.name, opts.variant, plan.hash_tag, opts.namespace
                )
                for line in retired.lines():
                    log(line)
        chain = ChainResult(opts.variant, opts.namespace, results, time.monotonic() - start, opts.no_cache)
        timings.record(chain.record())  # under the lock: concurrent builds must not drop each other's records
    return chain


def _reuse(plan: StagePlan, image: Image, log: Log, status: str = "reused") -> StageResult:
    for ref in (plan.tag, plan.hash_tag):
        image.tag(*ref.rsplit(":", 1))
    name = plan.stage.name
    if status == "reused":
        log(f"  {name:<4} up to date: {plan.tag} ({plan.hash_tag}); inputs unchanged, not rebuilt")
    return StageResult(name, status, plan.tag, plan.hash_tag, image.id, plan.content_hash, 0.0)


def _build(
    plan: StagePlan, source: Path, cli: BuildCli, client: docker.DockerClient, opts: BuildOptions, log: Log
) -> StageResult:
    name = plan.stage.name
    log(f"  {name:<4} building {plan.tag} on {plan.parent.ref} with {cli.describe()}")
    started = time.monotonic()
    context = stage_context(plan, source)
    try:
        argv = ["-f", str(context / plan.stage.dockerfile), "-t", plan.tag, "-t", plan.hash_tag]
        for key, value in plan.build_args.items():
            argv += ["--build-arg", f"{key}={value}"]
        for key, value in plan.labels.items():
            argv += ["--label", f"{key}={value}"]
        if plan.secret is not None:
            argv += ["--secret", f"id={CA_SECRET_ID},src={plan.secret}"]
        if opts.no_cache:
            argv.append("--no-cache")
        if cli.kind == "buildx":
            argv.append("--load")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        steps, cached = run_buildkit(
            cli,
            [*argv, str(context)],
            stage=name,
            timeout=opts.timeout,
            verbose=opts.verbose,
            log=log,
            log_file=cache_dir() / "logs" / f"build-{opts.variant}-{name}-{stamp}.log",
        )
    finally:
        shutil.rmtree(context, ignore_errors=True)
    image = client.images.get(plan.hash_tag)
    if image.labels.get(HASH_LABEL) != plan.content_hash:
        raise TankError(f"stage {name}: built image {plan.hash_tag} lacks its content-hash label")
    seconds = time.monotonic() - started
    size = image.attrs["Size"] / 1e9
    log(f"  {name:<4} built {plan.tag} ({plan.hash_tag}) in {seconds:.1f} s, {size:.2f} GB")
    return StageResult(
        name, "built", plan.tag, plan.hash_tag, image.id, plan.content_hash, seconds, steps, cached
    )


def _find_by_hash(client: docker.DockerClient, stage: str, content_hash: str) -> Image | None:
    """The image of `stage` with this content hash. The stage label too: an image built by hand FROM a stage
    image inherits that image's hash label, and must not be taken for it."""
    labels = [f"{HASH_LABEL}={content_hash}", f"{STAGE_LABEL}={stage}"]
    images = client.images.list(filters={"label": labels})
    return images[0] if images else None
