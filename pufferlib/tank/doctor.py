"""`puffertank doctor`: is this host ready for the tank, and if not, what exactly to fix.

Each check answers pass, warn or fail (or skip when an earlier failure makes it moot) with the fix. Only
failures make the exit code non-zero: a laptop without a GPU is a fine host for the cpu variant, so missing
GPU pieces are warnings there. Host side only: reads /proc, /sys and the Docker engine, never imports torch.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import docker  # docker.errors comes with it

from pufferlib.tank.docker_client import TankError, engine_address, find_build_cli, get_client

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
SETUP = "sudo provision/setup-host.sh"
PROBE_LABELS = {"puffertank.managed": "1", "puffertank.purpose": "doctor"}
PROBE_TIMEOUT_S = 120
GIB = 1024**3
DISK_FAIL_GIB, DISK_WARN_GIB = 5, 25  # the cuda chain is ~8 GB of images plus ~3 GB of build cache
SHM_WARN_GIB = 1  # containers sharing the host's IPC (--ipc=host) get the host's /dev/shm

# Minimum Linux driver for each CUDA release (NVIDIA's CUDA release notes), and per major version the
# floor that still runs it through minor-version compatibility (without PTX JIT of newer kernels).
CUDA_MIN_DRIVER = {
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
}
CUDA_COMPAT_FLOOR = {"11": "450.80.02", "12": "525.60.13", "13": "580.65.06"}
PYPI_TORCH_CUDA = "13.0"  # what the default cuda image holds (PyPI's torch 2.13)


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
    engine_error: str = ""
    info: dict = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)  # PCI addresses of NVIDIA display/3D controllers
    driver: str | None = None  # the loaded kernel module's version
    probe: bool = True  # may start containers

    @property
    def has_runtime(self) -> bool:
        return "nvidia" in (self.info.get("Runtimes") or {})


# ---------------------------------------------------------------------------------------------------------
# Small pure helpers (unit-tested)
# ---------------------------------------------------------------------------------------------------------


def version_tuple(version: str) -> tuple[int, ...]:
    """'580.65.06' -> (580, 65, 6); junk after the numbers is ignored."""
    match = re.match(r"\d+(\.\d+)*", version.strip())
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group(0).split("."))


def driver_vs_cuda(driver: str, cuda: str) -> tuple[str, str]:
    """(status, why) for running a build for CUDA `cuda` on NVIDIA driver `driver`."""
    major = cuda.split(".")[0]
    floor = CUDA_COMPAT_FLOOR.get(major)
    full = CUDA_MIN_DRIVER.get(cuda)
    if floor is None:
        return (
            WARN,
            f"CUDA {cuda} is newer than this check knows; cannot tell whether driver {driver} runs it",
        )
    have = version_tuple(driver)
    if full is not None and have >= version_tuple(full):
        return PASS, f"driver {driver} supports CUDA {cuda} (needs >= {full})"
    if have >= version_tuple(floor):
        needs = f"full support from {full}" if full else "full support needs a newer driver"
        return WARN, (
            f"driver {driver} runs CUDA {cuda} only through minor-version compatibility ({needs}); "
            "kernels that need PTX JIT may fail"
        )
    return FAIL, f"driver {driver} is too old for CUDA {cuda} (needs >= {full or floor})"


def torch_index_for_driver(driver: str) -> str | None:
    """A PyTorch CUDA wheel index this driver runs (CUDA 12.6: fully from 560, via compatibility from 525)."""
    if version_tuple(driver) >= version_tuple(CUDA_COMPAT_FLOOR["12"]):
        return "https://download.pytorch.org/whl/cu126"
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
# Host facts
# ---------------------------------------------------------------------------------------------------------


def nvidia_pci_gpus(sysfs: Path = Path("/sys/bus/pci/devices")) -> list[str]:
    """NVIDIA display/3D controllers on the PCI bus, whether or not a driver is loaded."""
    found = []
    for dev in sorted(sysfs.glob("*")) if sysfs.is_dir() else []:
        try:
            vendor = (dev / "vendor").read_text().strip()
            klass = (dev / "class").read_text().strip()
        except OSError:
            continue
        if vendor == "0x10de" and klass.startswith("0x03"):
            found.append(dev.name)
    return found


def loaded_driver(proc: Path = Path("/proc/driver/nvidia/version")) -> str | None:
    """The NVIDIA kernel module's version, read from /proc (no nvidia-smi needed)."""
    try:
        text = proc.read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def secure_boot_enabled() -> bool | None:
    var = Path("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")
    try:
        return var.read_bytes()[4] == 1
    except (OSError, IndexError):
        return None


def gather(probe: bool = True) -> Host:
    host = Host(gpus=nvidia_pci_gpus(), driver=loaded_driver(), probe=probe)
    try:
        host.client = get_client(timeout=30)
        host.info = host.client.info()
    except TankError as exc:
        host.engine_error = str(exc)
        host.client = None
    except docker.errors.DockerException as exc:
        host.engine_error = f"the Docker engine at {engine_address()} answered with an error: {exc}"
        host.client = None
    return host


# ---------------------------------------------------------------------------------------------------------
# The checks, in the order they are shown
# ---------------------------------------------------------------------------------------------------------


def check_docker(host: Host) -> Check:
    if host.client is None:
        return Check("docker", FAIL, host.engine_error.split(" Fix: ")[0], _fix_of(host.engine_error))
    version = host.client.version()
    server = version.get("Version", "?")
    detail = f"Docker Engine {server} (API {version.get('ApiVersion', '?')}) at {engine_address()}"
    if version_tuple(server) < (20, 10):
        return Check("docker", WARN, detail + "; older than 20.10", f"upgrade it: {SETUP} --only docker")
    return Check("docker", PASS, detail)


def _fix_of(message: str) -> str:
    return message.split(" Fix: ", 1)[1].rstrip(".") if " Fix: " in message else ""


def check_buildkit(host: Host) -> Check:
    try:
        cli = find_build_cli()
    except TankError as exc:
        return Check("buildkit", FAIL, str(exc).split(" Fix: ")[0], _fix_of(str(exc)))
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
    fix = f"{SETUP} --only nvidia-driver, then reboot"
    if secure_boot_enabled():
        fix = (
            "Secure Boot is on and blocks an unsigned module: enroll the DKMS key "
            "(sudo mokutil --import /var/lib/dkms/mok.pub), reboot and confirm in the MOK manager"
        )
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
    for ref in (
        "puffertank/lib:cuda",
        "puffertank/base:cuda",
        "puffertank/lib:cpu",
        "puffertank/debian:bookworm",
    ):
        try:
            client.images.get(ref)
            return ref
        except docker.errors.ImageNotFound:
            continue
    return None


def run_probe(client: docker.DockerClient, image: str, command: list[str], **kwargs) -> tuple[int, str]:
    """Run a short command in a labelled container; always removed; a hang becomes exit 124."""
    container = client.containers.run(
        image, command, detach=True, labels=PROBE_LABELS, entrypoint=[], **kwargs
    )
    try:
        try:
            rc = container.wait(timeout=PROBE_TIMEOUT_S)["StatusCode"]
        except Exception:  # requests' ReadTimeout, or the engine went away
            return 124, f"no answer within {PROBE_TIMEOUT_S} s"
        return rc, container.logs().decode(errors="replace").strip()
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


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
    gpus = docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])
    try:
        rc, out = run_probe(
            host.client,
            image,
            ["nvidia-smi", "-L"],
            device_requests=[gpus],
            environment={"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
        )
    except docker.errors.DockerException as exc:
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


def _image(client: docker.DockerClient, ref: str):
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


def check_driver_vs_cuda(host: Host) -> Check:
    if not host.gpus:
        return Check("driver-vs-cuda", WARN, "no GPU: the cuda image would run on the CPU; use --variant cpu")
    if not host.driver:
        return Check("driver-vs-cuda", SKIP, "no NVIDIA driver loaded (see nvidia-driver)")
    image = None
    if host.client is not None:
        image = _image(host.client, "puffertank/lib:cuda") or _image(host.client, "puffertank/base:cuda")
    cuda = (image.labels.get("puffertank.cuda-version") if image is not None else None) or ""
    source = f"{image.tags[0] if image.tags else image.short_id} is built for CUDA {cuda}" if cuda else ""
    if not cuda or cuda == "none":
        cuda, source = (
            PYPI_TORCH_CUDA,
            f"the default cuda build (PyPI torch, CUDA {PYPI_TORCH_CUDA}; not built yet)",
        )
    status, why = driver_vs_cuda(host.driver, cuda)
    fix = ""
    if status != PASS:
        fix = f"install driver >= 580 ({SETUP} --only nvidia-driver --driver cuda)"
        index = torch_index_for_driver(host.driver)
        if index:
            fix += (
                f", or build a torch this driver runs: puffertank build --variant cuda --torch-index {index}"
            )
    if status == FAIL and image is None:
        status = WARN  # nothing built yet: a warning about the build to come, not a broken host
    return Check("driver-vs-cuda", status, f"{source}: {why}", fix)


def check_shm(host: Host) -> Check:
    try:
        st = os.statvfs("/dev/shm")
    except OSError as exc:
        return Check("shm", WARN, f"cannot read /dev/shm: {exc}", "mount a tmpfs on /dev/shm")
    total, free = st.f_blocks * st.f_frsize / GIB, st.f_bavail * st.f_frsize / GIB
    detail = (
        f"/dev/shm {total:.1f} GiB ({free:.1f} GiB free); puffertank runs containers with --ipc=host or "
        "--shm-size (Docker's default 64 MB breaks torch DataLoader workers)"
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


def stage_freshness(
    client: docker.DockerClient,
    variant: str,
    stage: str,
    namespace: str = "puffertank",
    source: Path | None = None,
) -> str | None:
    """'current' or 'stale' when the stage's content hash can be recomputed from the source, else None.

    Same recipe as `puffertank build` (which reuses a stage whose hash matches), so 'stale' means exactly
    "a build would rebuild this stage".
    """
    from pufferlib.tank import images as chain  # the stage graph and its hashing live there

    if stage == "base":
        return None  # its hash depends on how torch was resolved (index, wheelhouse): not recomputable here
    try:
        tree = chain.find_source_tree(source)
        image = client.images.get(f"{namespace}/{stage}:{variant}")
        # A build puts this stage on top of the current stage below it, so hash against that one.
        below = chain.STAGES[chain.STAGES.index(stage) - 1]
        parent_ref = f"{namespace}/{below}:{variant}"
        parent_id = client.images.get(parent_ref).id
        args = {chain.STAGE_SPECS[stage].parent_arg: parent_ref, "VARIANT": variant}
        current = chain.stage_plan(stage, tree, variant, args, parent_ref, parent_id).compute_hash(tree)
    except (TankError, docker.errors.DockerException, OSError, AttributeError, KeyError, TypeError):
        return None  # no checkout here, an image without labels, or a changed recipe: no verdict
    return "current" if image.labels.get(chain.HASH_LABEL) == current else "stale"


def check_images(host: Host) -> Check:
    if host.client is None:
        return Check("images", SKIP, "Docker is not reachable")
    now = dt.datetime.now(dt.UTC)
    wanted = "cuda" if host.gpus else "cpu"
    parts: list[str] = []
    stale: dict[str, list[str]] = {}
    missing = False
    for variant in ("cpu", "cuda"):
        lib = _image(host.client, f"puffertank/lib:{variant}")
        if lib is None:
            missing = missing or variant == wanted
            parts.append(f"{variant}: not built")
            continue
        created = dt.datetime.fromisoformat(lib.attrs["Created"][:19]).replace(tzinfo=dt.UTC)
        age = humanize_age((now - created).total_seconds())
        behind = [s for s in ("envs", "lib") if stage_freshness(host.client, variant, s) == "stale"]
        if behind:
            stale[variant] = behind
        state = f"behind the source: {', '.join(behind)}" if behind else "matches the source"
        parts.append(f"{variant}: built {age} ago, {state}")
    detail = "; ".join(parts)
    if missing:
        return Check("images", WARN, detail, f"puffertank build --variant {wanted}")
    if stale:
        builds = " && ".join(f"puffertank build --variant {v}" for v in sorted(stale))
        return Check("images", WARN, detail, f"{builds} (rebuilds only the stages that changed)")
    return Check("images", PASS, detail)


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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check this host (Docker, BuildKit, NVIDIA driver and runtime, disk, images, Tailscale)",
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
        counts = {s: sum(c.status == s for c in checks) for s in (PASS, WARN, FAIL, SKIP)}
        print(
            json.dumps(
                {"checks": [asdict(c) for c in checks], "summary": counts, "exit_code": code}, indent=2
            )
        )
    else:
        print("puffertank doctor\n")
        print(render(checks, color=sys.stdout.isatty()))
    if host.client is not None:
        host.client.close()
    return code
