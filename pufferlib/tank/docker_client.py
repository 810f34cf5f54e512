"""One place to reach the Docker engine, with errors a researcher can act on.

The Docker SDK does run/exec/logs/inspect/cleanup. Its build API only drives the legacy builder, which
rejects `RUN --mount`, so builds go through a BuildKit-capable docker *CLI* found here at runtime.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker  # docker.errors, docker.types and docker.models come with it


class TankError(RuntimeError):
    """A failure the user can fix; the message names the thing and the fix. Printed without a traceback."""


def engine_address() -> str:
    """Where the SDK and the CLI will look for the engine (DOCKER_HOST or the default socket)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def get_client(timeout: int = 120) -> docker.DockerClient:
    """A connected SDK client, or a TankError that says how to get the engine running."""
    address = engine_address()
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        reason = str(exc)
        if "Permission denied" in reason or "PermissionError" in reason:
            fix = "add your user to the 'docker' group (sudo usermod -aG docker $USER, then log in again)"
        else:
            fix = "start it (sudo systemctl start docker, or run provision/setup-host.sh) or set DOCKER_HOST"
        raise TankError(
            f"cannot reach the Docker engine at {address}: {_short(reason)}. Fix: {fix}."
        ) from exc
    return client


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def image_exists(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def require_image(client: docker.DockerClient, ref: str, fix: str) -> docker.models.images.Image:
    """The image, or a TankError naming it and the command that makes it."""
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound as exc:
        raise TankError(f"image {ref} not found in the local Docker engine. Build it with: {fix}") from exc


# ---------------------------------------------------------------------------------------------------------
# BuildKit-capable CLI discovery
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildCli:
    """How to invoke a BuildKit build: `argv_prefix + [build args...]` with `env` added to os.environ."""

    path: str
    argv_prefix: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    kind: str  # "buildx" or "docker-buildkit"
    version: str

    def describe(self) -> str:
        return f"{' '.join(self.argv_prefix)} ({self.kind}, client {self.version})"


def _candidate_clis() -> list[str]:
    """Every docker executable worth trying, the user's choice first, then PATH order, then known spots."""
    found: list[str] = []
    override = os.environ.get("PUFFERTANK_DOCKER_CLI")
    if override:
        found.append(override)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / "docker"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found.append(str(candidate))
    for extra in ("/usr/bin/docker", "/usr/local/bin/docker", "/bin/docker"):
        if Path(extra).is_file():
            found.append(extra)
    unique: list[str] = []
    seen: set[str] = set()
    for path in found:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def _run_quiet(argv: list[str], timeout: float = 20) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def probe_cli(path: str) -> BuildCli | None:
    """A BuildCli for this executable if it can run BuildKit builds, else None.

    `docker buildx` (real hosts) is preferred. Without buildx, clients before 23.0 still run BuildKit
    through DOCKER_BUILDKIT=1; from 23.0 on that path needs buildx, so such a client is rejected.
    """
    res = _run_quiet([path, "buildx", "version"])
    version = _client_version(path)
    if res is not None and res.returncode == 0:
        return BuildCli(path, (path, "buildx", "build"), (), "buildx", version or "?")
    if version and _major(version) < 23:
        return BuildCli(path, (path, "build"), (("DOCKER_BUILDKIT", "1"),), "docker-buildkit", version)
    return None


def _client_version(path: str) -> str | None:
    res = _run_quiet([path, "version", "--format", "{{.Client.Version}}"])
    if res is None or not res.stdout.strip():
        return None
    return res.stdout.strip().splitlines()[0]


def _major(version: str) -> int:
    match = re.match(r"(\d+)", version)
    return int(match.group(1)) if match else 0


@functools.cache
def find_build_cli() -> BuildCli:
    """The first BuildKit-capable docker client, or a TankError listing what was tried and the fix."""
    tried: list[str] = []
    for path in _candidate_clis():
        cli = probe_cli(path)
        if cli is not None:
            return cli
        tried.append(f"{path} (client {_client_version(path) or 'unknown'}, no buildx)")
    if not tried and not shutil.which("docker"):
        tried.append("no docker executable on PATH")
    raise TankError(
        "no BuildKit-capable docker client found (tried: " + "; ".join(tried) + "). Fix: install the buildx "
        "plugin (apt-get install docker-buildx, or docker-buildx-plugin from Docker's repository), or point "
        "PUFFERTANK_DOCKER_CLI at a docker client older than 23.0 (e.g. Debian's docker.io 20.10)."
    )


# ---------------------------------------------------------------------------------------------------------
# Cross-process lock: engineers and test sessions share one engine; two heavy builds at once on 2 cores
# only make both slow, and two debootstraps of the same tag waste a minute.
# ---------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def machine_lock(name: str, timeout: float = 3600, waiting_message: str | None = None) -> Iterator[None]:
    """Hold an exclusive flock named `name` (per machine); TankError after `timeout` seconds of waiting."""
    lock_dir = Path(tempfile.gettempdir()) / "puffertank-locks"
    lock_dir.mkdir(mode=0o1777, exist_ok=True)
    path = lock_dir / f"{name}.lock"
    with open(path, "a+") as handle:
        deadline = time.monotonic() + timeout
        announced = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not announced and waiting_message:
                    print(waiting_message, file=sys.stderr, flush=True)
                    announced = True
                if time.monotonic() > deadline:
                    raise TankError(
                        f"gave up after {timeout:.0f} s waiting for {path} (another puffertank process "
                        "holds it). Fix: wait for it, or remove the lock file if no puffertank is running."
                    ) from None
                time.sleep(1.0)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
