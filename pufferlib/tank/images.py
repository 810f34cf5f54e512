"""The image chain base -> envs -> lib, and `puffertank build`.

Each stage is one Dockerfile at the top of the source tree. Its inputs (Dockerfile, the files of its build
context, build args, the image below it) hash to a content hash; a stage whose hash is already an image is
not rebuilt, so after an edit to pufferlib only the lib stage runs. Builds go through a BuildKit-capable
docker CLI (secrets, cache and bind mounts); everything else through the Docker SDK. No registry is needed:
when the Debian 12 base cannot be pulled it is made locally with debootstrap.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import docker  # docker.errors comes with it

from pufferlib.tank.docker_client import (
    BuildCli,
    TankError,
    find_build_cli,
    get_client,
    image_exists,
    machine_lock,
)

VARIANTS = ("cpu", "cuda")
STAGES = ("base", "envs", "lib")
NAMESPACE = "puffertank"
DEFAULT_BASE_IMAGE = "debian:12-slim"
DEBIAN_BASE_TAG = "puffertank/debian:bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# The CUDA version PyPI's (default) torch wheels are built for; a --torch-index names its own (cu126 -> 12.6).
PYPI_TORCH_CUDA = {"2.13.0": "13.0"}
HASH_LABEL = "puffertank.content-hash"
HASH_SCHEME = "puffertank-stage-v1"  # bump to invalidate every stage hash
CA_SECRET_ID = "pip_ca"

Log = Callable[[str], None]
# Tags ensure_debian_base made with debootstrap in this process (tests use it to avoid a second debootstrap).
MADE_BY_DEBOOTSTRAP: set[str] = set()


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "puffertank"


# ---------------------------------------------------------------------------------------------------------
# The Debian 12 base, made locally when no registry is reachable
# ---------------------------------------------------------------------------------------------------------


def ensure_debian_base(
    client: docker.DockerClient | None = None,
    tag: str = DEBIAN_BASE_TAG,
    *,
    mirror: str | None = None,
    log: Log = _log,
) -> str:
    """Return the tag of a local Debian 12 (bookworm) image, making it with debootstrap when missing.

    Other code (provisioning tests, the devcontainer) calls this to get a base without a registry. Making
    it takes about a minute and needs root for debootstrap (sudo -n is tried when not root).
    """
    client = client or get_client()
    if image_exists(client, tag):
        return tag
    with machine_lock("debian-base", waiting_message=f"puffertank: waiting for another process making {tag}"):
        if image_exists(client, tag):
            return tag
        _make_debian_base(
            client, tag, mirror or os.environ.get("PUFFERTANK_DEBIAN_MIRROR") or DEBIAN_MIRROR, log
        )
    return tag


def _make_debian_base(client: docker.DockerClient, tag: str, mirror: str, log: Log) -> None:
    debootstrap = shutil.which("debootstrap") or next(
        (p for p in ("/usr/sbin/debootstrap", "/sbin/debootstrap") if Path(p).is_file()), None
    )
    if debootstrap is None:
        raise TankError(
            f"cannot make the Debian 12 base image {tag}: debootstrap is not installed. Fix: "
            "sudo apt-get install debootstrap (or make a Debian 12 image available: docker pull "
            "debian:12-slim)."
        )
    sudo: list[str] = []
    if os.geteuid() != 0:
        if not shutil.which("sudo"):
            raise TankError(f"making {tag} with debootstrap needs root. Fix: run this once as root.")
        sudo = ["sudo", "-n"]
    log(
        f"puffertank: {tag} is missing and no registry is needed: making Debian 12 (bookworm) with "
        f"debootstrap from {mirror} and importing it (about a minute)"
    )
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="puffertank-debian-"))
    rootfs, tarball = work / "rootfs", work / "rootfs.tar"
    try:
        _run_logged(
            [*sudo, debootstrap, "--variant=minbase", "bookworm", str(rootfs), mirror],
            what="debootstrap",
            timeout=1200,
            fix="check that the mirror is reachable over http (PUFFERTANK_DEBIAN_MIRROR to use another)",
        )
        sources = [f"deb {mirror} bookworm main", f"deb {mirror} bookworm-updates main"]
        if mirror == DEBIAN_MIRROR:
            sources.append("deb http://deb.debian.org/debian-security bookworm-security main")
        # Same shape as Debian's official images: apt sources for updates, no package cache, no lists.
        script = (
            f"printf '%s\\n' {' '.join(repr(s) for s in sources)} > {rootfs}/etc/apt/sources.list"
            f" && rm -rf {rootfs}/var/cache/apt/archives/*.deb {rootfs}/var/lib/apt/lists/*"
            f" && tar --numeric-owner -C {rootfs} -cf {tarball} . && chmod 0644 {tarball}"
        )
        _run_logged([*sudo, "sh", "-c", script], what="packing the root filesystem", timeout=600, fix="")
        repository, _, image_tag = tag.rpartition(":")
        client.api.import_image_from_file(
            str(tarball),
            repository=repository,
            tag=image_tag,
            changes=[
                "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                'CMD ["bash"]',
            ],
        )
    finally:
        subprocess.run([*sudo, "rm", "-rf", str(work)], check=False)
    if not image_exists(client, tag):
        raise TankError(f"importing the debootstrap root filesystem as {tag} failed (no image afterwards)")
    MADE_BY_DEBOOTSTRAP.add(tag)
    log(f"puffertank: made {tag} in {time.monotonic() - start:.0f} s")


def _run_logged(argv: list[str], *, what: str, timeout: float, fix: str) -> None:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise TankError(f"{what} did not finish within {timeout:.0f} s. {fix}") from exc
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        raise TankError(f"{what} failed (exit {res.returncode}):\n{tail}\n{fix}".rstrip())


def _is_debian12(ref: str) -> bool:
    return bool(re.fullmatch(r"(docker\.io/)?(library/)?debian:(12|bookworm)([-.][\w.-]+)?", ref))


def resolve_base_image(client: docker.DockerClient, ref: str, log: Log = _log) -> str:
    """The base image to build on: `ref` if local or pullable; else, for Debian 12, the locally made one."""
    if image_exists(client, ref):
        return ref
    try:
        repository, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
        client.images.pull(repository, tag=tag)
        return ref
    except docker.errors.DockerException as exc:
        reason = " ".join(str(getattr(exc, "explanation", None) or exc).split())
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        if _is_debian12(ref):
            log(f"puffertank: cannot pull {ref} ({reason}); using a locally made Debian 12 base instead")
            return ensure_debian_base(client, log=log)
        raise TankError(
            f"base image {ref} is not in the local engine and cannot be pulled ({reason}). Fix: load it "
            "(docker load -i FILE), pass a local image to --base-image, or leave --base-image out to build "
            "on a locally made Debian 12."
        ) from exc


# ---------------------------------------------------------------------------------------------------------
# Stages, their build contexts and content hashes
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    name: str
    dockerfile: str
    parent_arg: str  # the build arg naming the image below
    context: tuple[str, ...]  # paths inside the source tree that this stage's build context holds
    optional: tuple[str, ...] = ()  # context paths that may be absent
    cuda_only: tuple[str, ...] = ()  # left out of the cpu variant's context (and hash)


STAGE_SPECS: dict[str, Stage] = {
    "base": Stage(
        "base",
        "Dockerfile.base",
        "BASE_IMAGE",
        (
            "docker/constraints/base.txt",
            "docker/constraints/cuda.txt",
            "docker/install-torch.sh",
            "docker/install-cuda-toolchain.sh",
            "docker/check_base.py",
        ),
        cuda_only=("docker/constraints/cuda.txt", "docker/install-cuda-toolchain.sh"),
    ),
    "envs": Stage(
        "envs",
        "Dockerfile.envs",
        "BASE_IMAGE",
        (
            "docker/constraints/base.txt",
            "docker/constraints/envs.txt",
            "docker/install-envs.sh",
            "docker/check_envs.py",
        ),
    ),
    "lib": Stage(
        "lib",
        "Dockerfile.lib",
        "ENVS_IMAGE",
        (
            "pyproject.toml",
            "README.md",
            "pufferlib",
            "docker/bashrc",
            "docker/entrypoint.sh",
            "docker/install-pufferlib.sh",
            "docker/check_lib.py",
        ),
        optional=("README.md",),
    ),
}

_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


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


def find_source_tree(explicit: str | Path | None = None) -> Path:
    """The PufferTank source tree (Dockerfiles, docker/, pufferlib/): --source, the cwd's, or the package's.

    Dockerfiles are not part of an installed wheel, so building needs a checkout.
    """
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    else:
        cwd = Path.cwd().resolve()
        candidates += [cwd, *cwd.parents]
        candidates.append(Path(__file__).resolve().parents[2])
    for candidate in candidates:
        if (
            all((candidate / STAGE_SPECS[s].dockerfile).is_file() for s in STAGES)
            and (candidate / "pufferlib").is_dir()
        ):
            return candidate.resolve()
    where = f"{explicit}" if explicit else "the current directory, its parents, or the installed package"
    raise TankError(
        "no PufferTank source tree (Dockerfile.base, Dockerfile.envs, Dockerfile.lib, pufferlib/) in "
        f"{where}. Fix: run puffertank build from a checkout, or pass --source DIR."
    )


def _file_digest(path: Path) -> str:
    stat = path.stat()
    if stat.st_size > 16 << 20:  # big wheels: name, size and mtime are enough to notice a change
        return f"size={stat.st_size},mtime={stat.st_mtime_ns}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class StagePlan:
    stage: Stage
    files: list[tuple[str, Path]]  # (path in the context, path on the host)
    build_args: dict[str, str]
    labels: dict[str, str]
    secret: Path | None = None
    content_hash: str = ""
    parent_ref: str = ""
    parent_id: str = ""

    def compute_hash(self, source: Path) -> str:
        """Hash of everything that shapes the image: not the CA bundle, not the tag names, not the time."""
        h = hashlib.sha256()
        h.update(f"{HASH_SCHEME}\n{self.stage.name}\n".encode())
        h.update((source / self.stage.dockerfile).read_bytes())
        for rel, path in sorted(self.files):
            h.update(f"\nfile {rel} {_file_digest(path)} {path.stat().st_mode & 0o111:o}".encode())
        for key, value in sorted(self.build_args.items()):
            if key != self.stage.parent_arg:
                h.update(f"\narg {key}={value}".encode())
        h.update(f"\nparent {self.parent_id}".encode())
        self.content_hash = h.hexdigest()
        return self.content_hash


def stage_plan(
    name: str,
    source: Path,
    variant: str,
    args: dict[str, str],
    parent_ref: str,
    parent_id: str,
    ca: Path | None = None,
    extra_files: list[tuple[str, Path]] = (),
) -> StagePlan:
    """What building stage `name` on top of `parent_ref` takes: the one recipe behind its content hash
    (`puffertank build` reuses a stage whose hash matches; `puffertank doctor` compares against it)."""
    stage = STAGE_SPECS[name]
    files = stage_files(source, stage, variant) + list(extra_files)
    if (
        name != "base"
    ):  # only the base stage reads the torch/user args; keep its children's hashes free of them
        args = {k: v for k, v in args.items() if k in (stage.parent_arg, "VARIANT")}
    return StagePlan(stage, files, args, {}, ca, parent_ref=parent_ref, parent_id=parent_id)


def stage_files(source: Path, stage: Stage, variant: str) -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    for rel in stage.context:
        if variant != "cuda" and rel in stage.cuda_only:
            continue
        if not (source / rel).exists():
            if rel in stage.optional:
                continue
            raise TankError(
                f"{source / rel} is missing; the {stage.name} stage needs it (is the checkout complete?)"
            )
        files.extend(_walk_files(source, rel))
    return files


def _stage_context(plan: StagePlan, source: Path) -> Path:
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


# ---------------------------------------------------------------------------------------------------------
# Options and their resolution (CA bundle, wheelhouse, torch)
# ---------------------------------------------------------------------------------------------------------


@dataclass
class BuildOptions:
    variant: str = "cpu"
    stage: str = "all"  # the stage to end at; the ones below are built (or reused) first
    base_image: str = DEFAULT_BASE_IMAGE
    wheelhouse: Path | None = None  # None: pip's find-links, when it holds the CPU torch wheel (cpu only)
    ca_cert: Path | None = None  # None: the host's bundle (pip's cert, SSL_CERT_FILE, ...), if any
    use_ca_cert: bool = True
    torch_index: str | None = None
    cuda_version: str | None = None
    uid: int = 1000
    gid: int = 1000
    no_cache: bool = False
    namespace: str = NAMESPACE
    source: Path | None = None
    timeout: float = 3600.0  # per stage
    verbose: bool = False
    keep_old: bool = False  # keep the previous content-hash tags (default: untag them, freeing the space)

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise TankError(f"unknown variant {self.variant!r}: choose one of {', '.join(VARIANTS)}")
        if self.stage not in (*STAGES, "all"):
            raise TankError(f"unknown stage {self.stage!r}: choose one of {', '.join(STAGES)}, all")
        if self.cuda_version is not None and not re.fullmatch(r"\d+\.\d+", self.cuda_version):
            raise TankError(f"--cuda-version {self.cuda_version!r} is not MAJOR.MINOR (e.g. 12.6)")
        if self.variant == "cpu" and self.cuda_version not in (None, "none"):
            raise TankError("--cuda-version only applies to --variant cuda")
        if not re.fullmatch(r"[a-z0-9][a-z0-9._/-]*", self.namespace):
            raise TankError(f"--namespace {self.namespace!r} is not a valid image repository prefix")
        for name in ("uid", "gid"):
            if not 1 <= getattr(self, name) < 2**31:
                raise TankError(f"--{name} must be a positive number (not root): got {getattr(self, name)}")

    def targets(self) -> list[str]:
        end = "lib" if self.stage == "all" else self.stage
        return list(STAGES[: STAGES.index(end) + 1])

    def tag(self, stage: str) -> str:
        return f"{self.namespace}/{stage}:{self.variant}"


def _pip_settings() -> dict[str, str]:
    """pip's effective `cert` and `find-links` (config files and PIP_* env), read without importing pip."""
    settings: dict[str, str] = {}
    try:
        res = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        for line in res.stdout.splitlines():
            key, _, value = line.partition("=")
            name = key.rsplit(".", 1)[-1]
            if name in ("cert", "find-links") and name not in settings:
                settings[name] = value.strip().strip("'\"")
    except (OSError, subprocess.TimeoutExpired):
        pass
    for env, name in (("PIP_CERT", "cert"), ("PIP_FIND_LINKS", "find-links")):
        if os.environ.get(env):
            settings[name] = os.environ[env]
    return settings


def resolve_ca_bundle(opts: BuildOptions, pip: dict[str, str] | None = None) -> Path | None:
    """The CA bundle pip in the build should trust, or None (pip then uses its own)."""
    if not opts.use_ca_cert:
        return None
    if opts.ca_cert is not None:
        path = Path(opts.ca_cert).expanduser()
        if not path.is_file():
            raise TankError(
                f"--ca-cert {path}: no such file. Fix: pass the PEM bundle your proxy needs "
                "(e.g. /etc/ssl/certs/ca-certificates.crt), or leave --ca-cert out to use the host's."
            )
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise TankError(f"--ca-cert {path}: cannot read it ({exc}). Fix: check its permissions.") from exc
        if "-----BEGIN CERTIFICATE-----" not in text:
            raise TankError(f"--ca-cert {path} holds no PEM certificate (no '-----BEGIN CERTIFICATE-----').")
        return path
    pip = pip if pip is not None else _pip_settings()
    for candidate in (
        pip.get("cert"),
        os.environ.get("REQUESTS_CA_BUNDLE"),
        os.environ.get("SSL_CERT_FILE"),
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def torch_version(source: Path) -> str:
    text = (source / "docker/constraints/base.txt").read_text()
    match = re.search(r"^torch==([^\s;#]+)", text, re.M)
    if not match:
        raise TankError("docker/constraints/base.txt pins no torch version (expected a line torch==X.Y.Z)")
    return match.group(1)


def _wheel_matches(path: Path, version: str, variant: str) -> bool:
    name = path.name
    if not name.startswith(f"torch-{version}") or not name.endswith(".whl"):
        return False
    return ("+cpu" in name) == (variant == "cpu")


@dataclass
class TorchChoice:
    spec: str
    index: str
    cuda_version: str
    wheels: list[Path] = field(default_factory=list)
    note: str = ""


def resolve_torch(opts: BuildOptions, source: Path, pip: dict[str, str] | None = None) -> TorchChoice:
    """Which torch the base stage installs and from where (the wheelhouse, an index, or PyPI)."""
    version = torch_version(source)
    wheels: list[Path] = []
    if opts.wheelhouse is not None:
        house = Path(opts.wheelhouse).expanduser()
        if not house.is_dir():
            raise TankError(f"--wheelhouse {house}: no such directory. Fix: pass a folder of .whl files.")
        wheels = sorted(p for p in house.glob("*.whl") if p.is_file())
        if not wheels:
            raise TankError(f"--wheelhouse {house} holds no .whl files.")
        # A cpu torch in the wheelhouse would win over the CUDA one (its local version sorts higher).
        wheels = [
            w
            for w in wheels
            if not (w.name.startswith("torch-") and not _wheel_matches(w, version, opts.variant))
        ]
    elif opts.variant == "cpu":
        pip = pip if pip is not None else _pip_settings()
        for folder in pip.get("find-links", "").split():
            if "://" not in folder and Path(folder).is_dir():
                wheels = [
                    p for p in sorted(Path(folder).glob("torch-*.whl")) if _wheel_matches(p, version, "cpu")
                ]
                if wheels:
                    break
    has_torch = any(_wheel_matches(w, version, opts.variant) for w in wheels)

    if opts.variant == "cpu":
        index = opts.torch_index or ("" if has_torch else CPU_TORCH_INDEX)
        where = f"wheelhouse ({wheels[0].parent})" if has_torch else index
        return TorchChoice(
            f"torch=={version}+cpu", index, "none", wheels, f"torch {version}+cpu from {where}"
        )
    index = opts.torch_index or ""
    cuda = opts.cuda_version
    if cuda is None:
        match = re.search(r"/cu(\d+)(\d)/?$", index)
        cuda = (
            f"{match.group(1)}.{match.group(2)}"
            if match
            else PYPI_TORCH_CUDA.get(version)
            if not index
            else None
        )
    if cuda is None:
        raise TankError(
            f"cannot tell which CUDA version torch from {index or 'PyPI'} is built for. "
            "Fix: pass --cuda-version MAJOR.MINOR."
        )
    return TorchChoice(
        f"torch=={version}", index, cuda, wheels, f"torch {version} (CUDA {cuda}) from {index or 'PyPI'}"
    )


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
    try:
        return str(tomllib.loads((source / "pyproject.toml").read_text())["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0"


# ---------------------------------------------------------------------------------------------------------
# Running one BuildKit build
# ---------------------------------------------------------------------------------------------------------

_STEP_RE = re.compile(r"^#(\d+) \[([^\]]+)\] (.*)$")
_DONE_RE = re.compile(r"^#(\d+) (DONE [\d.]+s|CACHED)$")
_ERROR_RE = re.compile(r"^#(\d+) ERROR: (.*)$")


class BuildFailed(TankError):
    pass


def run_buildkit(
    cli: BuildCli,
    args: list[str],
    *,
    stage: str,
    timeout: float,
    verbose: bool,
    log: Log,
    log_file: Path,
) -> tuple[int, int]:
    """Run one build, printing one line per step; on failure raise naming the stage, step and log tail.

    Returns (RUN/COPY steps, how many of them came from the cache): a build with none cached is cold.
    """
    env = {**os.environ, **dict(cli.env)}
    argv = [*cli.argv_prefix, "--progress=plain", *args]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    steps: dict[str, str] = {}
    tail: deque[str] = deque(maxlen=4000)
    failed: list[tuple[str, str]] = []
    done: dict[str, bool] = {}  # step id -> came from the cache
    timed_out = threading.Event()
    with open(log_file, "w") as record:
        record.write(" ".join(argv) + "\n")
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,
        )

        def on_timeout() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)

        timer = threading.Timer(timeout, on_timeout)
        timer.start()
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.rstrip("\n")
                record.write(raw)
                tail.append(line)
                if verbose:
                    log(f"  {stage} | {line}")
                if m := _STEP_RE.match(line):
                    if not m.group(2).startswith("internal") and m.group(1) not in steps:
                        steps[m.group(1)] = f"[{m.group(2)}] {m.group(3)}"
                elif (m := _DONE_RE.match(line)) and m.group(1) in steps:
                    done[m.group(1)] = m.group(2) == "CACHED"
                    if not verbose:
                        took = "cached" if done[m.group(1)] else m.group(2)[5:]
                        log(f"  {stage:<4} {_one_line(steps[m.group(1)], 90)}  {took}")
                elif m := _ERROR_RE.match(line):
                    failed.append((m.group(1), m.group(2)))
            rc = proc.wait()
        except BaseException:
            os.killpg(proc.pid, 15)
            proc.wait()
            raise
        finally:
            timer.cancel()
    if timed_out.is_set():
        raise BuildFailed(
            f"stage {stage}: the build did not finish within {timeout:.0f} s and was stopped "
            f"(--timeout to allow longer). Full log: {log_file}"
        )
    if rc != 0:
        step_id, reason = failed[-1] if failed else ("", "")
        step = steps.get(step_id, "(before any step: reading the Dockerfile or the context)")
        own = [ln for ln in tail if step_id and ln.startswith(f"#{step_id} ")]
        shown = (own or list(tail))[-30:]
        raise BuildFailed(
            f"stage {stage} failed at step {_one_line(step, 160)}\n"
            + (f"  reason: {reason}\n" if reason else "")
            + "--- last log lines ---\n"
            + "\n".join(shown)
            + f"\n--- full log: {log_file}"
        )
    work = [i for i, text in steps.items() if re.match(r"\[[^\]]*\] (RUN|COPY|ADD)\b", text) and i in done]
    return len(work), sum(done[i] for i in work)


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


# ---------------------------------------------------------------------------------------------------------
# The chain
# ---------------------------------------------------------------------------------------------------------


@dataclass
class StageResult:
    stage: str
    status: str  # "built" or "reused"
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


def _find_by_hash(client: docker.DockerClient, content_hash: str) -> docker.models.images.Image | None:
    images = client.images.list(filters={"label": f"{HASH_LABEL}={content_hash}"})
    return images[0] if images else None


def _retire_old_tags(
    client: docker.DockerClient, opts: BuildOptions, stage: str, keep: str, log: Log
) -> None:
    """Untag earlier content-hash tags of this stage, so superseded images (GBs for base) are freed."""
    repo = f"{opts.namespace}/{stage}"
    pattern = re.compile(rf"^{re.escape(repo)}:{re.escape(opts.variant)}-[0-9a-f]{{12}}$")
    for image in client.images.list(name=repo):
        for tag in image.tags:
            if pattern.match(tag) and tag != keep:
                try:
                    client.images.remove(tag)
                    log(f"  {stage:<4} removed superseded {tag}")
                except docker.errors.APIError:
                    pass  # still used by a container; it goes with `docker image prune` later


def build_chain(
    opts: BuildOptions, client: docker.DockerClient | None = None, log: Log = _log
) -> ChainResult:
    """Build (or reuse) the stages up to opts.stage, in order, and tag them. Serialized per machine."""
    opts.validate()
    client = client or get_client()
    source = find_source_tree(opts.source)
    pip = _pip_settings()
    ca = resolve_ca_bundle(opts, pip)
    torch = resolve_torch(opts, source, pip)
    start = time.monotonic()
    with machine_lock("build", waiting_message="puffertank: waiting for another puffertank build to finish"):
        results = _build_locked(opts, client, source, ca, torch, log)
        chain = ChainResult(opts.variant, opts.namespace, results, time.monotonic() - start, opts.no_cache)
        record_timings(chain)  # under the lock: concurrent builds must not drop each other's records
    return chain


def _build_locked(
    opts: BuildOptions,
    client: docker.DockerClient,
    source: Path,
    ca: Path | None,
    torch: TorchChoice,
    log: Log,
) -> dict[str, StageResult]:
    cli: BuildCli | None = None
    results: dict[str, StageResult] = {}
    parent_ref = resolve_base_image(client, opts.base_image, log)
    parent_id = client.images.get(parent_ref).id
    base_image = (parent_ref, parent_id)
    revision = _git_revision(source)
    version = _project_version(source)
    log(
        f"puffertank build: variant {opts.variant}, stages {' -> '.join(opts.targets())}, on {parent_ref}; "
        f"{torch.note}; CA bundle for pip: {ca or 'none (pip defaults)'}"
    )
    for name in opts.targets():
        stage = STAGE_SPECS[name]
        wheels = [(f"docker/wheelhouse/{w.name}", w) for w in torch.wheels] if name == "base" else []
        args = {
            stage.parent_arg: parent_ref,
            "VARIANT": opts.variant,
            "TORCH_SPEC": torch.spec,
            "TORCH_INDEX": torch.index,
            "CUDA_VERSION": torch.cuda_version,
            "USER_UID": str(opts.uid),
            "USER_GID": str(opts.gid),
        }
        plan = stage_plan(name, source, opts.variant, args, parent_ref, parent_id, ca, wheels)
        content_hash = plan.compute_hash(source)
        tag, hash_tag = opts.tag(name), f"{opts.tag(name)}-{content_hash[:12]}"
        started = time.monotonic()
        existing = None if opts.no_cache else _find_by_hash(client, content_hash)
        if existing is not None:
            existing.tag(*tag.split(":"))
            existing.tag(*hash_tag.split(":"))
            log(f"  {name:<4} up to date: {tag} ({hash_tag}); inputs unchanged, not rebuilt")
            results[name] = StageResult(name, "reused", tag, hash_tag, existing.id, content_hash, 0.0)
        else:
            cli = cli or find_build_cli()
            log(f"  {name:<4} building {tag} with {cli.describe()}")
            labels = {
                HASH_LABEL: content_hash,
                "puffertank.stage": name,
                "puffertank.variant": opts.variant,
                "puffertank.cuda-version": torch.cuda_version,
                "puffertank.torch": torch.spec.split("==", 1)[1],
                "puffertank.uid": str(opts.uid),
                "puffertank.gid": str(opts.gid),
                "puffertank.debian-base": base_image[0],
                "puffertank.debian-base-id": base_image[1],
                "org.opencontainers.image.version": version,
                "org.opencontainers.image.created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "org.opencontainers.image.base.name": parent_ref,
            }
            if revision:
                labels["org.opencontainers.image.revision"] = revision
            context = _stage_context(plan, source)
            try:
                argv = ["-f", str(context / stage.dockerfile), "-t", tag, "-t", hash_tag]
                for key, value in args.items():
                    argv += ["--build-arg", f"{key}={value}"]
                for key, value in labels.items():
                    argv += ["--label", f"{key}={value}"]
                if ca is not None:
                    argv += ["--secret", f"id={CA_SECRET_ID},src={ca}"]
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
            image = client.images.get(hash_tag)
            if image.labels.get(HASH_LABEL) != content_hash:
                raise TankError(f"stage {name}: built image {hash_tag} lacks its content-hash label")
            seconds = time.monotonic() - started
            log(
                f"  {name:<4} built {tag} ({hash_tag}) in {seconds:.1f} s, {image.attrs['Size'] / 1e9:.2f} GB"
            )
            results[name] = StageResult(
                name, "built", tag, hash_tag, image.id, content_hash, seconds, steps, cached
            )
        if not opts.keep_old:
            _retire_old_tags(client, opts, name, hash_tag, log)
        parent_ref, parent_id = hash_tag, results[name].image_id
    return results


# ---------------------------------------------------------------------------------------------------------
# Timings: what each build took, kept on disk so `--timings` can show the budgets
# ---------------------------------------------------------------------------------------------------------

TIMINGS_FILE = "timings.json"
BUDGETS = {
    "lib_rebuild_s": 10.0,
    "import_s": 2.5,
    "cpu_lib_above_base_gb": 2.0,
    "cuda_lib_gb": 7.0,
    "cold_cpu_chain_s": 600.0,
}


def record_timings(chain: ChainResult) -> None:
    path = cache_dir() / TIMINGS_FILE
    try:
        runs = json.loads(path.read_text()) if path.is_file() else []
    except (OSError, ValueError):
        runs = []
    runs.append(
        {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "variant": chain.variant,
            "namespace": chain.namespace,
            "no_cache": chain.no_cache,
            "seconds": round(chain.seconds, 2),
            "stages": {
                n: {"status": r.status, "seconds": round(r.seconds, 2), "steps": r.steps, "cached": r.cached}
                for n, r in chain.stages.items()
            },
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(runs[-200:], indent=1))
    tmp.replace(path)


def load_timings() -> list[dict]:
    path = cache_dir() / TIMINGS_FILE
    try:
        return json.loads(path.read_text()) if path.is_file() else []
    except (OSError, ValueError):
        return []


def measure_import(client: docker.DockerClient, image: str, repeats: int = 3) -> list[float]:
    """Wall times of `docker run --rm IMAGE python -c 'import pufferlib, torch'` (create to removal)."""
    times: list[float] = []
    for _ in range(repeats):
        start = time.monotonic()
        container = client.containers.create(
            image,
            ["python", "-c", "import pufferlib, torch"],
            labels={"puffertank.managed": "1", "puffertank.purpose": "timings"},
        )
        try:
            container.start()
            code = container.wait(timeout=120).get("StatusCode")
        finally:
            container.remove(force=True)
        if code != 0:
            raise TankError(f"`python -c 'import pufferlib, torch'` failed in {image} (exit {code})")
        times.append(time.monotonic() - start)
    return times


def timings_report(client: docker.DockerClient, opts: BuildOptions) -> str:
    """The budgets table: sizes from the engine, import time measured now, build times from the record."""
    rows: list[tuple[str, str, str, str]] = []
    sizes: dict[str, float] = {}
    lines = [f"Images ({opts.variant}):"]
    for stage in STAGES:
        try:
            image = client.images.get(opts.tag(stage))
        except docker.errors.ImageNotFound:
            lines.append(f"  {opts.tag(stage):<28} not built")
            continue
        sizes[stage] = image.attrs["Size"] / 1e9
        lines.append(
            f"  {opts.tag(stage):<28} {sizes[stage]:6.2f} GB  {image.labels.get(HASH_LABEL, '')[:12]}"
        )
    runs = [r for r in load_timings() if r.get("variant") == opts.variant]

    def status(value: float | None, budget: float) -> str:
        return "-" if value is None else ("ok" if value <= budget else "OVER")

    incremental = [
        r
        for r in runs
        if r["stages"].get("lib", {}).get("status") == "built"
        and all(r["stages"].get(s, {}).get("status") == "reused" for s in ("base", "envs"))
    ]
    lib_s = incremental[-1]["stages"]["lib"]["seconds"] if incremental else None
    rows.append(
        (
            "lib rebuild after an edit",
            f"<= {BUDGETS['lib_rebuild_s']:.0f} s",
            f"{lib_s:.1f} s (last lib-only build)" if lib_s is not None else "no lib-only build recorded",
            status(lib_s, BUDGETS["lib_rebuild_s"]),
        )
    )
    import_s = None
    if "lib" in sizes:
        times = measure_import(client, opts.tag("lib"))
        import_s = sorted(times)[len(times) // 2]
        rows.append(
            (
                "docker run --rm: import pufferlib, torch",
                f"<= {BUDGETS['import_s']} s",
                f"{import_s:.2f} s (median of {len(times)}, now)",
                status(import_s, BUDGETS["import_s"]),
            )
        )
    if "lib" in sizes:
        lib = client.images.get(opts.tag("lib"))
        base_ref = lib.labels.get("puffertank.debian-base-id") or lib.labels.get("puffertank.debian-base", "")
        try:
            debian = client.images.get(base_ref).attrs["Size"] / 1e9 if base_ref else None
        except docker.errors.ImageNotFound:
            debian = None
        if opts.variant == "cpu":
            above = sizes["lib"] - debian if debian is not None else None
            rows.append(
                (
                    "cpu lib image above its Debian base",
                    f"<= {BUDGETS['cpu_lib_above_base_gb']:.0f} GB",
                    f"{above:.2f} GB ({sizes['lib']:.2f} - {debian:.2f})"
                    if above is not None
                    else "base not found",
                    status(above, BUDGETS["cpu_lib_above_base_gb"]),
                )
            )
        else:
            rows.append(
                (
                    "cuda lib image",
                    f"<= {BUDGETS['cuda_lib_gb']:.0f} GB",
                    f"{sizes['lib']:.2f} GB",
                    status(sizes["lib"], BUDGETS["cuda_lib_gb"]),
                )
            )

    def cold(run: dict) -> bool:
        stages = [run["stages"].get(s, {}) for s in STAGES]
        return all(s.get("status") == "built" and s.get("steps") and not s.get("cached") for s in stages)

    full = [r for r in runs if cold(r)]
    chain_s = full[-1]["seconds"] if full else None
    rows.append(
        (
            f"{opts.variant} chain from a cold cache",
            f"<= {BUDGETS['cold_cpu_chain_s'] / 60:.0f} min" if opts.variant == "cpu" else "-",
            (
                f"{chain_s / 60:.1f} min (last, {full[-1]['when']})"
                if chain_s is not None
                else "none recorded (a build where no step came from the cache)"
            ),
            status(chain_s, BUDGETS["cold_cpu_chain_s"]) if opts.variant == "cpu" else "-",
        )
    )
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    lines.append("Budgets:")
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)).rstrip())
    load = os.getloadavg()[0]
    lines.append(
        f"(build times recorded in {cache_dir() / TIMINGS_FILE}; load average now {load:.1f} on "
        f"{os.cpu_count()} cores: times are noisy on a busy machine)"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# `puffertank build`
# ---------------------------------------------------------------------------------------------------------


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build",
        help="build the image chain base -> envs -> lib (unchanged stages are reused)",
        description=(
            "Build puffertank/base, puffertank/envs and puffertank/lib for a variant, in order. A stage "
            "whose inputs did not change is reused, so after an edit to pufferlib only lib is rebuilt. Works "
            "without a registry: the Debian 12 base is made locally (debootstrap) when it cannot be pulled."
        ),
    )
    p.add_argument("--variant", choices=VARIANTS, default="cpu", help="torch build: cpu (default) or cuda")
    p.add_argument(
        "--stage", choices=(*STAGES, "all"), default="all", help="build up to this stage (default: all = lib)"
    )
    p.add_argument(
        "--base-image", default=DEFAULT_BASE_IMAGE, help=f"Debian 12 image (default {DEFAULT_BASE_IMAGE})"
    )
    p.add_argument(
        "--wheelhouse", type=Path, help="folder of local wheels (e.g. the CPU torch wheel) for pip"
    )
    p.add_argument("--ca-cert", type=Path, help="CA bundle for pip behind a TLS proxy (default: the host's)")
    p.add_argument("--no-ca-cert", action="store_true", help="do not hand pip any CA bundle")
    p.add_argument(
        "--torch-index", help="extra pip index for torch, e.g. https://download.pytorch.org/whl/cu126"
    )
    p.add_argument(
        "--cuda-version", help="CUDA version of that torch (MAJOR.MINOR; guessed from cuXYZ index URLs)"
    )
    p.add_argument("--uid", type=int, default=1000, help="UID of the image's user (default 1000)")
    p.add_argument("--gid", type=int, default=1000, help="GID of the image's user (default 1000)")
    p.add_argument("--no-cache", action="store_true", help="rebuild every stage up to --stage from scratch")
    p.add_argument("--timings", action="store_true", help="afterwards, show sizes, times and the budgets")
    p.add_argument("--namespace", default=NAMESPACE, help=f"image repository prefix (default {NAMESPACE})")
    p.add_argument("--source", type=Path, help="PufferTank source tree (default: found from the cwd)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per stage (default 3600)")
    p.add_argument("--keep-old", action="store_true", help="keep superseded content-hash tags")
    p.add_argument("-v", "--verbose", action="store_true", help="show the full BuildKit log")
    p.set_defaults(func=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    opts = BuildOptions(
        variant=args.variant,
        stage=args.stage,
        base_image=args.base_image,
        wheelhouse=args.wheelhouse,
        ca_cert=args.ca_cert,
        use_ca_cert=not args.no_ca_cert,
        torch_index=args.torch_index,
        cuda_version=args.cuda_version,
        uid=args.uid,
        gid=args.gid,
        no_cache=args.no_cache,
        namespace=args.namespace,
        source=args.source,
        timeout=args.timeout,
        verbose=args.verbose,
        keep_old=args.keep_old,
    )
    try:
        client = get_client()
        chain = build_chain(opts, client)
        built = [n for n, r in chain.stages.items() if r.status == "built"]
        print(
            f"puffertank build: {chain.tag(opts.targets()[-1])} ready in {chain.seconds:.1f} s "
            f"(built: {', '.join(built) or 'nothing, all up to date'})"
        )
        if args.timings:
            print(timings_report(client, opts))
    except TankError as exc:
        print(f"puffertank build: error: {exc}", file=sys.stderr)
        return 1
    return 0
