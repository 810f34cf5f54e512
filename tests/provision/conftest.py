"""Run provision/setup-host.sh inside throwaway Debian 12 containers made from our local base image.

The script changes a whole host (apt sources, packages, services), so it only ever runs in a container
here. Every container carries the label puffertank.test=provision and is removed when the test is done,
also when it fails or times out.
"""

from __future__ import annotations

import contextlib
import shlex
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _repo import REPO

docker = pytest.importorskip("docker", reason="the Docker SDK is needed: pip install 'pufferlib[tank]'")

SCRIPT = "/src/provision/setup-host.sh"  # where the repository is mounted, read-only, in the container
COPY = "/opt/puffertank-src"  # a copy of the script's files for tests that run it as an unprivileged user
LABEL = "puffertank.test"


@dataclass
class Result:
    """What one command printed (stdout and stderr together) and its exit code."""

    rc: int
    out: str

    def __str__(self) -> str:
        return f"exit {self.rc}\n{self.out}"


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    """A client with a long read timeout: one exec may run apt for minutes."""
    try:
        client = docker.from_env(timeout=900)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"provision tests need a running Docker engine ({exc}): start dockerd or set DOCKER_HOST")
    yield client
    client.close()


@pytest.fixture(scope="session")
def debian_base(docker_client: docker.DockerClient) -> str:
    """A local Debian 12 image (debootstrap + import), made by the image chain's helper when missing."""
    from pufferlib.tank.build.debian import ensure_debian_base

    return ensure_debian_base(docker_client)


class Box:
    """One long-lived container to run commands in; `sh` wraps each in a timeout."""

    def __init__(self, container: docker.models.containers.Container) -> None:
        self.container = container

    def sh(self, script: str, timeout: int = 300, user: str = "root") -> Result:
        """Run a bash script; a hang becomes exit 124 with a message, not a stuck test."""
        argv = ["timeout", "--kill-after=10", str(timeout), "bash", "-c", script]
        rc, out = self.container.exec_run(argv, user=user, demux=False)
        text = (out or b"").decode(errors="replace")
        if rc == 124:
            text += f"\n[timed out after {timeout}s: {script}]"
        return Result(rc, text)

    def setup(self, *args: str, timeout: int = 600, env: str = "", user: str = "root") -> Result:
        """Run setup-host.sh with ARGS; as another user than root, from a copy that user can read."""
        script = SCRIPT if user == "root" else self._readable_copy()
        return self.sh(f"{env} {script} {shlex.join(args)} 2>&1", timeout=timeout, user=user)

    def _readable_copy(self) -> str:
        """The script and the facts it reads (docker/) copied to a root-owned, world-readable folder: the
        checkout mounted at /src keeps the host's modes, and a fresh clone in a `mktemp -d` folder (0700)
        is unreadable to any user but root."""
        copy = f"install -d -m 0755 {COPY} && cp -r /src/provision /src/docker {COPY}/"
        made = self.sh(f"{copy} && chmod -R a+rX,go-w {COPY}")
        assert made.rc == 0, made
        return f"{COPY}/provision/setup-host.sh"


@contextlib.contextmanager
def started_box(
    client: docker.DockerClient, image: str, volumes: dict | None = None, **kwargs
) -> Iterator[Box]:
    """A fresh Debian 12 container with the repository mounted read-only at /src, removed on exit."""
    container = client.containers.run(
        image,
        ["sleep", "1800"],  # a ceiling on the container's life even if the removal below never runs
        detach=True,
        labels={LABEL: "provision", f"{LABEL}.run": uuid.uuid4().hex[:12]},
        volumes={str(REPO): {"bind": "/src", "mode": "ro"}, **(volumes or {})},
        init=True,
        **kwargs,
    )
    try:
        yield Box(container)
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


@pytest.fixture
def box(docker_client: docker.DockerClient, debian_base: str) -> Iterator[Box]:
    """A fresh container for one test."""
    with started_box(docker_client, debian_base) as fresh:
        yield fresh


@pytest.fixture(scope="module")
def module_box(docker_client: docker.DockerClient, debian_base: str) -> Iterator[Box]:
    """One container shared by a module's tests (for steps that build on each other, or read-only checks)."""
    with started_box(docker_client, debian_base) as shared:
        yield shared


@pytest.fixture(scope="session")
def lib_image(docker_client: docker.DockerClient) -> Iterator[str]:
    """The cpu image chain as `puffertank build` makes it (reused when its inputs are unchanged), under a tag
    of this session's own so a concurrent rebuild cannot retire it. A Debian 12 system with Python 3.11 and
    the packages the host tooling imports: the stand-in for a provisioned host in the verify tests."""
    from pufferlib.tank.build.chain import build_chain
    from pufferlib.tank.build.options import BuildOptions

    result = build_chain(BuildOptions(variant="cpu"), docker_client)
    tag = uuid.uuid4().hex[:12]
    docker_client.images.get(result.stages["lib"].image_id).tag("puffertank-provision/lib", tag)
    yield f"puffertank-provision/lib:{tag}"
    with contextlib.suppress(docker.errors.APIError):
        docker_client.images.remove(f"puffertank-provision/lib:{tag}")


SOCKET = "/var/run/docker.sock"

INSTALL_TOOLING = r"""
set -e
python=$(readlink -f /opt/venv/bin/python)
"$python" -m venv --without-pip /opt/puffertank/venv
site=$(/opt/puffertank/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
printf '%s\n' /src /opt/tank-extra /opt/venv/lib/python3.11/site-packages >"$site/puffertank-test.pth"
cat >/opt/puffertank/venv/bin/puffertank <<'EOF'
#!/opt/puffertank/venv/bin/python
import sys
from pufferlib.tank.cli import main
sys.exit(main())
EOF
chmod 755 /opt/puffertank/venv/bin/puffertank
"""


@pytest.fixture(scope="module")
def tooled_host(docker_client: docker.DockerClient, lib_image: str) -> Iterator[Box]:
    """A provisioned host's stand-in: a container of the cpu lib image (Debian 12, Python 3.11 and the
    packages the host tooling imports) with the engine's socket, so doctor checks a real engine, and the
    host tooling where the image step puts it, /opt/puffertank/venv: a venv whose puffertank command runs
    this checkout's pufferlib (/src) with the Docker SDK this test run uses."""
    if not Path(SOCKET).is_socket():
        pytest.fail(f"these tests hand the engine's socket to a container: no {SOCKET} here")
    sdk = str(Path(docker.__file__).parent)
    volumes = {SOCKET: {"bind": SOCKET, "mode": "rw"}, sdk: {"bind": "/opt/tank-extra/docker", "mode": "ro"}}
    with started_box(docker_client, lib_image, volumes=volumes, user="root", entrypoint=[]) as box:
        made = box.sh(INSTALL_TOOLING)
        assert made.rc == 0, made
        yield box
