"""`puffertank doctor`: is this host ready for the tank, and if not, what exactly to fix.

Each check answers pass, warn or fail (or skip when an earlier failure makes it moot) with the fix. Only
failures make the exit code non-zero: a laptop without a GPU is a fine host for the cpu variant, so missing
GPU pieces are warnings there. Host side only: the host facts from /proc and /sys (tank/hostfacts.py) and
the Docker engine, never torch. The CUDA facts come from docker/cuda.toml (tank/cuda.py); `--json` is read
by provision/setup-host.sh's verify step, so its shape is documented in docs/images.md and kept stable.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import docker  # docker.errors comes with it

from pufferlib.tank import cuda, hostfacts, registry, settings, variant
from pufferlib.tank.build.buildkit import find_build_cli
from pufferlib.tank.build.freshness import freshness, local_image
from pufferlib.tank.build.resolve import torch_version
from pufferlib.tank.containers import SHM_SIZE, RunSpec, run_captured
from pufferlib.tank.engine import engine_address, get_client
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import CUDA_LABEL, DEBIAN_BASE, VARIANTS, image_ref
from pufferlib.tank.source import find_source_tree

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
SETUP = "sudo provision/setup-host.sh"
PROBE_LABELS = {"puffertank.purpose": "doctor"}
PROBE_TIMEOUT_S = 120
GIB = 1024**3
DISK_FAIL_GIB, DISK_WARN_GIB = 5, 25  # the cuda chain is ~8 GB of images plus ~3 GB of build cache
SHM_WARN_GIB = 1  # containers sharing the host's IPC (--ipc=host) get the host's /dev/shm
JSON_SCHEMA = 1  # bump when a field of `doctor --json` changes meaning or goes away


@dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""


@dataclass
class Host:
    """Facts gathered once and shared by the checks."""

    client: docker.DockerClient | None = None
    engine_error: TankError | None = None
    info: dict = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)  # PCI addresses of NVIDIA display/3D controllers
    driver: str | None = None  # the loaded kernel module's version
    driver_error: str = ""  # why the version file could not be read, when it is there
    probe: bool = True  # may start containers

    @property
    def has_runtime(self) -> bool:
        return "nvidia" in (self.info.get("Runtimes") or {})


# ---------------------------------------------------------------------------------------------------------
# Small pure helpers (unit-tested)
# ---------------------------------------------------------------------------------------------------------


def driver_vs_cuda(driver: str, cuda_version: str, facts: cuda.CudaFacts) -> tuple[str, str]:
    """(status, why) for running a build for CUDA `cuda_version` on NVIDIA driver `driver`."""
    floor = facts.compat_floor.get(cuda_version.split(".")[0])
    full = facts.min_driver.get(cuda_version)
    if floor is None:
        return (
            WARN,
            f"CUDA {cuda_version} is newer than {facts.path.name} knows; cannot tell whether driver {driver} "
            "runs it",
        )
    have = cuda.version_tuple(driver)
    if full is not None and have >= cuda.version_tuple(full):
        return PASS, f"driver {driver} supports CUDA {cuda_version} (needs >= {full})"
    if have >= cuda.version_tuple(floor):
        needs = f"full support from {full}" if full else "full support needs a newer driver"
        return WARN, (
            f"driver {driver} runs CUDA {cuda_version} only through minor-version compatibility ({needs}); "
            "kernels that need PTX JIT may fail"
        )
    return FAIL, f"driver {driver} is too old for CUDA {cuda_version} (needs >= {full or floor})"


def torch_index_for_driver(driver: str, facts: cuda.CudaFacts) -> str | None:
    """A PyTorch CUDA wheel index (docker/cuda.toml's [torch_index]) this driver runs, fully or through
    minor-version compatibility; None when the driver is too old for all of them."""
    have = cuda.version_tuple(driver)
    for url in facts.torch_index.values():
        index_cuda = cuda.cuda_of_index(url)
        floor = facts.compat_floor.get(index_cuda.split(".")[0]) if index_cuda else None
        if floor is not None and have >= cuda.version_tuple(floor):
            return url
    return None


def humanize_age(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(seconds, 0) / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def exit_code(checks: list[Check]) -> int:
    return 1 if any(c.status == FAIL for c in checks) else 0


# ---------------------------------------------------------------------------------------------------------
# Host facts (read by tank/hostfacts.py) and the engine, gathered once
# ---------------------------------------------------------------------------------------------------------


def gather(probe: bool = True) -> Host:
    host = Host(gpus=hostfacts.nvidia_gpus(), probe=probe)
    try:
        host.driver = hostfacts.loaded_driver()
    except hostfacts.FactError as exc:
        host.driver_error = str(exc)
    try:
        host.client = get_client(timeout=30)
        host.info = host.client.info()
    except TankError as exc:
        host.engine_error = exc
        host.client = None
    except docker.errors.DockerException as exc:
        host.engine_error = TankError(
            f"the Docker engine at {engine_address()} answered with an error: {exc}",
            "sudo systemctl restart docker",
        )
        host.client = None
    return host


# ---------------------------------------------------------------------------------------------------------
# The checks, in the order they are shown
# ---------------------------------------------------------------------------------------------------------


def check_docker(host: Host) -> Check:
    if host.client is None:
        error = host.engine_error or TankError(f"the Docker engine at {engine_address()} is not reachable")
        return Check("docker", FAIL, error.message, error.fix)
    version = host.client.version()
    server = version.get("Version", "?")
    detail = f"Docker Engine {server} (API {version.get('ApiVersion', '?')}) at {engine_address()}"
    if cuda.version_tuple(server) < (20, 10):
        return Check("docker", WARN, detail + "; older than 20.10", f"upgrade it: {SETUP} --only docker")
    return Check("docker", PASS, detail)


def check_buildkit(host: Host) -> Check:
    try:
        cli = find_build_cli()
    except TankError as exc:
        return Check("buildkit", FAIL, exc.message, exc.fix)
    detail = cli.describe()
    first = shutil.which("docker")
    if first and os.path.realpath(first) != os.path.realpath(cli.path):
        detail += (
            f"; the first docker on PATH ({first}) cannot run BuildKit builds, puffertank uses {cli.path}"
        )
    return Check("buildkit", PASS, detail)


def check_driver(host: Host) -> Check:
    if not host.gpus:
        return Check("nvidia-driver", WARN, "no NVIDIA GPU on this host: CPU only (use --variant cpu)")
    if host.driver:
        return Check("nvidia-driver", PASS, f"{len(host.gpus)} NVIDIA GPU(s), driver {host.driver} loaded")
    if host.driver_error:
        return Check("nvidia-driver", WARN, f"cannot tell which driver is loaded: {host.driver_error}")
    fix = f"{SETUP} --only nvidia-driver, then reboot"
    if hostfacts.secure_boot_enabled():
        fix = hostfacts.MOK_ADVICE
    return Check("nvidia-driver", FAIL, f"{len(host.gpus)} NVIDIA GPU(s) but no driver loaded", fix)


def check_runtime(host: Host) -> Check:
    if host.client is None:
        return Check("nvidia-runtime", SKIP, "Docker is not reachable")
    runtimes = sorted(host.info.get("Runtimes") or {})
    if host.has_runtime:
        default = host.info.get("DefaultRuntime", "runc")
        return Check(
            "nvidia-runtime",
            PASS,
            f"nvidia runtime configured (runtimes: {', '.join(runtimes)}; default {default})",
        )
    fix = f"{SETUP} --only nvidia-toolkit (nvidia-ctk runtime configure --runtime=docker, restart docker)"
    if host.gpus:
        return Check("nvidia-runtime", FAIL, "a GPU is present but Docker has no nvidia runtime", fix)
    return Check("nvidia-runtime", WARN, "no nvidia runtime in Docker (fine without a GPU)", fix)


def _probe_image(client: docker.DockerClient) -> str | None:
    """A local image to run nvidia-smi in: the NVIDIA runtime mounts it into any image."""
    for ref in (image_ref("lib", "cuda"), image_ref("base", "cuda"), image_ref("lib", "cpu"), DEBIAN_BASE):
        if local_image(client, ref) is not None:
            return ref
    return None


def check_gpu_in_container(host: Host) -> Check:
    if host.client is None:
        return Check("gpu-in-container", SKIP, "Docker is not reachable")
    if not host.gpus:
        return Check("gpu-in-container", WARN, "no GPU on this host: containers run on the CPU")
    if not host.has_runtime:
        return Check("gpu-in-container", SKIP, "no nvidia runtime (see nvidia-runtime)")
    if not host.probe:
        return Check("gpu-in-container", SKIP, "not probed (--no-probe)")
    image = _probe_image(host.client)
    if image is None:
        return Check(
            "gpu-in-container", SKIP, "no local image to probe with", "puffertank build --variant cuda"
        )
    spec = RunSpec(
        image,
        ["nvidia-smi", "-L"],
        gpus="all",
        entrypoint=[],
        env={"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
        labels=PROBE_LABELS,
        shm_size="64m",
        timeout=PROBE_TIMEOUT_S,
    )
    try:
        result = run_captured(host.client, spec)
        rc, out = result.exit_code, (result.stdout + result.stderr).strip()
        if result.timed_out:
            out = f"no answer within {PROBE_TIMEOUT_S} s"
    except (TankError, docker.errors.DockerException) as exc:
        rc, out = 1, str(exc)
    if rc == 0 and "GPU" in out:
        return Check("gpu-in-container", PASS, f"{image}: {out.splitlines()[0]}")
    last = out.splitlines()[-1] if out else f"exit {rc}"
    return Check(
        "gpu-in-container",
        FAIL,
        f"`docker run --gpus all {image} nvidia-smi -L` failed: {last}",
        f"check the driver (nvidia-smi on the host), then {SETUP} --only nvidia-toolkit",
    )


def check_driver_vs_cuda(host: Host) -> Check:
    if not host.gpus:
        return Check("driver-vs-cuda", WARN, "no GPU: the cuda image would run on the CPU; use --variant cpu")
    if not host.driver:
        return Check("driver-vs-cuda", SKIP, "no NVIDIA driver loaded (see nvidia-driver)")
    try:
        source = find_source_tree()
        facts = cuda.facts(source)
    except TankError as exc:
        return Check("driver-vs-cuda", WARN, f"cannot read the CUDA facts: {exc.message}", exc.fix)
    image = None
    if host.client is not None:
        image = local_image(host.client, image_ref("lib", "cuda")) or local_image(
            host.client, image_ref("base", "cuda")
        )
    cuda_version = (image.labels.get(CUDA_LABEL) if image is not None else None) or ""
    if cuda_version and cuda_version != "none":
        what = f"{image.tags[0] if image.tags else image.short_id} is built for CUDA {cuda_version}"
    else:
        image = None
        torch = torch_version(source)
        cuda_version = facts.pypi_cuda(torch) or ""
        what = f"the default cuda build (PyPI torch {torch}, CUDA {cuda_version}; not built yet)"
        if not cuda_version:
            return Check(
                "driver-vs-cuda",
                WARN,
                f"{facts.path} does not say which CUDA PyPI's torch {torch} is built for",
                f"add it to [pypi_torch_cuda] in {facts.path}",
            )
    status, why = driver_vs_cuda(host.driver, cuda_version, facts)
    fix = ""
    if status != PASS:
        needed = facts.needed_driver(cuda_version) or "a newer one"
        branch = facts.driver_branch.get("nvidia_default", "")
        fix = f"install driver >= {needed} ({SETUP} --only nvidia-driver --driver cuda: the {branch} branch)"
        index = torch_index_for_driver(host.driver, facts)
        if index:
            fix += (
                f", or build a torch this driver runs: puffertank build --variant cuda --torch-index {index}"
            )
    if status == FAIL and image is None:
        status = WARN  # nothing built yet: a warning about the build to come, not a broken host
    return Check("driver-vs-cuda", status, f"{what}: {why}", fix)


def check_shm(host: Host) -> Check:
    try:
        st = os.statvfs("/dev/shm")
    except OSError as exc:
        return Check("shm", WARN, f"cannot read /dev/shm: {exc}", "mount a tmpfs on /dev/shm")
    total, free = st.f_blocks * st.f_frsize / GIB, st.f_bavail * st.f_frsize / GIB
    detail = (
        f"/dev/shm {total:.1f} GiB ({free:.1f} GiB free); containers get their own {SHM_SIZE} one "
        "(Docker's default 64 MB breaks torch DataLoader workers), this one with --ipc-host"
    )
    if total < SHM_WARN_GIB:
        return Check("shm", WARN, detail, "sudo mount -o remount,size=8G /dev/shm (and in /etc/fstab)")
    return Check("shm", PASS, detail)


def check_disk(host: Host) -> Check:
    if host.client is None:
        return Check("disk", SKIP, "Docker is not reachable")
    root = host.info.get("DockerRootDir") or "/var/lib/docker"
    try:
        st = os.statvfs(root)
    except OSError as exc:
        return Check("disk", WARN, f"cannot stat Docker's data root {root}: {exc} (a remote engine?)")
    free = st.f_bavail * st.f_frsize / GIB
    detail = f"{free:.0f} GiB free under {root}"
    fix = "free space: docker builder prune; docker image prune (old puffertank content-hash tags go too)"
    if free < DISK_FAIL_GIB:
        return Check("disk", FAIL, detail + f" (< {DISK_FAIL_GIB} GiB: builds will fail)", fix)
    if free < DISK_WARN_GIB:
        return Check("disk", WARN, detail + f" (the cuda chain needs ~{DISK_WARN_GIB // 2} GiB)", fix)
    return Check("disk", PASS, detail)


def check_images(host: Host) -> Check:
    if host.client is None:
        return Check("images", SKIP, "Docker is not reachable")
    now = dt.datetime.now(dt.UTC)
    wanted = variant.auto_variant()
    parts: list[str] = []
    stale: dict[str, list[str]] = {}
    missing = False
    for name in VARIANTS:
        lib = local_image(host.client, image_ref("lib", name))
        if lib is None:
            missing = missing or name == wanted
            parts.append(f"{name}: not built")
            continue
        created = dt.datetime.fromisoformat(lib.attrs["Created"][:19]).replace(tzinfo=dt.UTC)
        age = humanize_age((now - created).total_seconds())
        verdict = freshness(host.client, name)
        behind = [s for s in ("envs", "lib") if verdict[s] == "stale"]
        if behind:
            stale[name] = behind
        state = f"behind the source: {', '.join(behind)}" if behind else "matches the source"
        parts.append(f"{name}: built {age} ago, {state}")
    detail = "; ".join(parts)
    if missing:
        return Check("images", WARN, detail, f"puffertank build --variant {wanted}")
    if stale:
        builds = " && ".join(f"puffertank build --variant {v}" for v in sorted(stale))
        return Check("images", WARN, detail, f"{builds} (rebuilds only the stages that changed)")
    return Check("images", PASS, detail)


def check_registry(host: Host) -> Check:
    """Whether the local lib image of this machine's variant is the one the fleet's registry has."""
    try:
        address = settings.get("registry")
    except settings.SettingError as exc:
        return Check("registry", FAIL, exc.message, exc.fix)
    if not address:
        return Check(
            "registry",
            SKIP,
            f"no fleet registry set (PUFFERTANK_REGISTRY, or registry= in {settings.config_file()})",
        )
    if host.client is None:
        return Check("registry", SKIP, "Docker is not reachable")
    wanted = variant.auto_variant()
    ref = image_ref("lib", wanted)
    try:
        there = registry.Registry(address, timeout=10).remote(*ref.rsplit(":", 1))
    except TankError as exc:
        return Check("registry", WARN, exc.message, exc.fix)
    here = local_image(host.client, ref)
    pull = f"puffertank pull --registry {address} --variant {wanted}"
    push = f"puffertank push --registry {address} --variant {wanted}"
    if there is None:
        detail = f"{address} has no {ref}" + ("" if here else ", and this box has none either")
        return Check("registry", WARN, detail, f"{push} (on the box that built it)")
    if here is None:
        return Check("registry", WARN, f"{ref} is not here; {address} has {there.config_digest[:19]}", pull)
    if here.id == there.config_digest:
        return Check("registry", PASS, f"{ref} matches {address}'s ({here.id[:19]})")
    return Check(
        "registry",
        WARN,
        f"{ref} differs from {address}'s: here {here.id[:19]}, registry {there.config_digest[:19]}",
        f"{pull} (take the fleet's), or {push} (publish this box's)",
    )


def check_tailscale(host: Host) -> Check:
    exe = shutil.which("tailscale")
    if exe is None:
        return Check(
            "tailscale", WARN, "not installed (remote access to this box)", f"{SETUP} --only tailscale"
        )
    try:
        res = subprocess.run(
            [exe, "status", "--json"], capture_output=True, text=True, timeout=15, check=False
        )
        status = json.loads(res.stdout or "{}")
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return Check(
            "tailscale", WARN, f"tailscale status failed: {exc}", "sudo systemctl restart tailscaled"
        )
    state = status.get("BackendState", "unknown")
    if state == "Running":
        me = status.get("Self") or {}
        ips = ", ".join(me.get("TailscaleIPs") or [])
        return Check("tailscale", PASS, f"up as {me.get('HostName', '?')} ({ips})")
    return Check("tailscale", WARN, f"installed, state {state}", "sudo tailscale up --ssh")


CHECKS: list[Callable[[Host], Check]] = [
    check_docker,
    check_buildkit,
    check_driver,
    check_runtime,
    check_gpu_in_container,
    check_driver_vs_cuda,
    check_shm,
    check_disk,
    check_images,
    check_registry,
    check_tailscale,
]


def run_checks(host: Host) -> list[Check]:
    results = []
    for check in CHECKS:
        try:
            results.append(check(host))
        except Exception as exc:  # a check that breaks is itself a finding, not a crash of the doctor
            name = check.__name__.removeprefix("check_").replace("_", "-")
            results.append(Check(name, FAIL, f"the check itself failed: {type(exc).__name__}: {exc}"))
    return results


# ---------------------------------------------------------------------------------------------------------
# Output and the subcommand
# ---------------------------------------------------------------------------------------------------------

_COLORS = {PASS: "32", WARN: "33", FAIL: "31", SKIP: "90"}


def render(checks: list[Check], color: bool = False) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        tag = c.status.upper()
        if color:
            tag = f"\033[{_COLORS[c.status]}m{tag}\033[0m"
        lines.append(f"  {tag:<4}  {c.name:<{width}}  {c.detail}")
        if c.fix:
            lines.append(f"  {'':<4}  {'':<{width}}  fix: {c.fix}")
    counts = {s: sum(c.status == s for c in checks) for s in (PASS, WARN, FAIL, SKIP)}
    lines.append("")
    lines.append(
        f"{counts[PASS]} passed, {counts[WARN]} warnings, {counts[FAIL]} failed"
        + (f", {counts[SKIP]} skipped" if counts[SKIP] else "")
    )
    return "\n".join(lines)


def report(checks: list[Check]) -> dict:
    """What `doctor --json` prints (docs/images.md documents each field; JSON_SCHEMA versions them)."""
    return {
        "schema": JSON_SCHEMA,
        "variant": variant.auto_variant(),
        "checks": [asdict(c) for c in checks],
        "summary": {s: sum(c.status == s for c in checks) for s in (PASS, WARN, FAIL, SKIP)},
        "exit_code": exit_code(checks),
    }


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check this host (Docker, BuildKit, NVIDIA driver and runtime, disk, images, registry, "
        "Tailscale)",
        description=(
            "Check this host for PufferTank: each check passes, warns or fails, with the fix. The exit code "
            "is non-zero only when a check fails; a host without a GPU gets warnings, not failures."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--no-probe", action="store_true", help="do not start a container to look for the GPU")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    host = gather(probe=not args.no_probe)
    checks = run_checks(host)
    code = exit_code(checks)
    if args.json:
        print(json.dumps(report(checks), indent=2))
    else:
        print(f"puffertank doctor (image variant for this machine: {variant.explain()})\n")
        print(render(checks, color=sys.stdout.isatty()))
    if host.client is not None:
        host.client.close()
    return code
