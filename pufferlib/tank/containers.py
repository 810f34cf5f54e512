"""Containers from the image chain: how they are configured (GPUs, shared memory, workspace, user) and run
with a timeout, labels and guaranteed removal. Used by `puffertank run/shell` and by tests.

Every container carries the label puffertank.managed=1 (plus the caller's labels) and is removed by the
code that started it, also on errors, timeouts and Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import docker  # docker.types and docker.errors come with it

from pufferlib.tank.docker_client import TankError, require_image

MANAGED_LABEL = "puffertank.managed"
WORKSPACE = "/workspace"
TIMEOUT_EXIT = 124


def nvidia_runtime_available(client: docker.DockerClient) -> bool:
    """Whether the engine can hand GPUs to containers (NVIDIA runtime registered, or its hook installed)."""
    try:
        runtimes = client.info().get("Runtimes") or {}
    except docker.errors.APIError:
        runtimes = {}
    if "nvidia" in runtimes:
        return True
    local = os.environ.get("DOCKER_HOST", "unix://").startswith("unix://")
    return local and any(
        Path(d, "nvidia-container-runtime-hook").exists()
        for d in os.environ.get("PATH", "").split(os.pathsep)
    )


def gpu_requests(client: docker.DockerClient, mode: str) -> list[docker.types.DeviceRequest]:
    """Device requests for --gpus auto|all|none (auto: all GPUs when the NVIDIA runtime is present)."""
    if mode not in ("auto", "all", "none"):
        raise TankError(f"--gpus {mode!r}: choose auto, all or none")
    if mode == "none":
        return []
    if not nvidia_runtime_available(client):
        if mode == "all":
            raise TankError(
                "--gpus all, but this Docker engine has no NVIDIA runtime. Fix: install the NVIDIA Container "
                "Toolkit (provision/setup-host.sh does) and restart Docker, or use --gpus none."
            )
        return []
    return [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]


def default_shm_size(client: docker.DockerClient) -> str:
    """Half the engine's memory, capped at 16 GiB: PyTorch's DataLoader and multiprocessing share tensors
    through /dev/shm, and Docker's default 64 MB fails with 'No space left on device'. tmpfs costs only what
    is used."""
    try:
        total = int(client.info().get("MemTotal") or 0)
    except docker.errors.APIError:
        total = 0
    gib = max(1, min(16, total // 2 // 2**30)) if total else 8
    return f"{gib}g"


@dataclass
class RunSpec:
    """What `docker run` would take, in the terms PufferTank cares about."""

    image: str
    command: list[str]
    workspace: Path | None = None  # bind-mounted read-write at /workspace (the working directory)
    user: str | None = None  # "UID:GID"; None keeps the image's user
    gpus: str = "auto"
    shm_size: str | None = None  # None: default_shm_size(); ignored with ipc_host
    ipc_host: bool = False
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    tty: bool = False
    name: str | None = None
    timeout: float | None = None  # seconds; then the container is killed (exit 124)
    network: str | None = None  # e.g. "none" for offline checks
    hostname: str = "puffertank"

    def create_kwargs(self, client: docker.DockerClient) -> dict:
        mounts = []
        if self.workspace is not None:
            source = Path(self.workspace).expanduser().resolve()
            if not source.is_dir():
                raise TankError(f"workspace {source} is not a directory. Fix: pass --workspace DIR.")
            mounts.append(docker.types.Mount(WORKSPACE, str(source), type="bind"))
        kwargs: dict = {
            "image": self.image,
            "command": self.command,
            "labels": {MANAGED_LABEL: "1", **self.labels},
            "environment": self.env,
            "mounts": mounts,
            "working_dir": WORKSPACE,
            "hostname": self.hostname,
            "tty": self.tty,
            "stdin_open": self.tty,
            "device_requests": gpu_requests(client, self.gpus),
            "name": self.name or f"puffertank-{uuid.uuid4().hex[:10]}",
        }
        if self.user:
            kwargs["user"] = self.user
        if self.ipc_host:
            kwargs["ipc_mode"] = "host"
        else:
            kwargs["shm_size"] = self.shm_size or default_shm_size(client)
        if self.network:
            kwargs["network_mode"] = self.network
        return kwargs


def create(client: docker.DockerClient, spec: RunSpec, fix: str = "") -> docker.models.containers.Container:
    require_image(client, spec.image, fix or "puffertank build")
    try:
        return client.containers.create(**spec.create_kwargs(client))
    except docker.errors.APIError as exc:
        raise TankError(f"cannot create a container from {spec.image}: {exc.explanation or exc}") from exc


def remove(container: docker.models.containers.Container) -> None:
    """Remove, whatever state it is in; a container already gone is fine."""
    with contextlib.suppress(docker.errors.NotFound):
        container.remove(force=True)


@contextlib.contextmanager
def tracked(
    client: docker.DockerClient, spec: RunSpec, fix: str = ""
) -> Iterator[docker.models.containers.Container]:
    """A created (not started) container that is removed when the block ends, however it ends."""
    container = create(client, spec, fix)
    try:
        yield container
    finally:
        remove(container)


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


def run_captured(client: docker.DockerClient, spec: RunSpec, fix: str = "") -> Result:
    """Run to completion (or spec.timeout), collect stdout and stderr, remove. For scripts and tests."""
    start = time.monotonic()
    with tracked(client, spec, fix) as container:
        container.start()
        timed_out = False
        try:
            status = container.wait(timeout=spec.timeout)
            code = int(status.get("StatusCode", 1))
        except Exception as exc:  # the SDK raises requests' ReadTimeout (a ConnectionError) on timeout
            if not _is_timeout(exc):
                raise
            timed_out, code = True, TIMEOUT_EXIT
            with contextlib.suppress(docker.errors.APIError):
                container.kill()
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace")
    return Result(code, out, err, timed_out, time.monotonic() - start)


def _is_timeout(exc: BaseException) -> bool:
    name = type(exc).__name__
    return "Timeout" in name or "timed out" in str(exc).lower()


def run_streamed(client: docker.DockerClient, spec: RunSpec, fix: str = "") -> int:
    """Run without a terminal, copying its output to ours as it comes; return its exit code.

    Ctrl-C stops the container (SIGTERM through tini, then SIGKILL); spec.timeout kills it (exit 124).
    """
    with tracked(client, spec, fix) as container:
        stream = client.api.attach(container.id, stdout=True, stderr=True, stream=True, logs=True, demux=True)
        container.start()
        timed_out = threading.Event()
        watchdog = None
        if spec.timeout:

            def kill() -> None:
                timed_out.set()
                with contextlib.suppress(docker.errors.APIError):
                    container.kill()

            watchdog = threading.Timer(spec.timeout, kill)
            watchdog.daemon = True
            watchdog.start()
        try:
            for out, err in stream:
                if out:
                    sys.stdout.buffer.write(out)
                    sys.stdout.buffer.flush()
                if err:
                    sys.stderr.buffer.write(err)
                    sys.stderr.buffer.flush()
            code = int(container.wait().get("StatusCode", 1))
        except KeyboardInterrupt:
            print("\npuffertank: interrupted; stopping the container", file=sys.stderr)
            with contextlib.suppress(docker.errors.APIError):
                container.stop(timeout=5)
            return 130
        finally:
            if watchdog is not None:
                watchdog.cancel()
        if timed_out.is_set():
            print(
                f"puffertank: timed out after {spec.timeout:.0f} s; the container was killed", file=sys.stderr
            )
            return TIMEOUT_EXIT
        return code


def run_interactive(client: docker.DockerClient, spec: RunSpec, fix: str = "") -> int:
    """Run with our terminal attached (like `docker run -it --rm`): raw keystrokes in, output out, the
    window size followed. Return the container's exit code."""
    import termios
    import tty

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise TankError(
            "an interactive session needs a terminal. Fix: run it in a terminal, or use puffertank run."
        )
    spec.tty = True
    stdin_fd, stdout_fd = sys.stdin.fileno(), sys.stdout.fileno()
    with tracked(client, spec, fix) as container:
        sock = client.api.attach_socket(
            container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        raw = getattr(sock, "_sock", sock)

        def resize(*_: object) -> None:
            size = os.get_terminal_size(stdout_fd)
            with contextlib.suppress(docker.errors.APIError):
                client.api.resize(container.id, height=size.lines, width=size.columns)

        old_attrs = termios.tcgetattr(stdin_fd)
        old_winch = signal.getsignal(signal.SIGWINCH)
        deadline = time.monotonic() + spec.timeout if spec.timeout else None
        try:
            container.start()
            resize()
            signal.signal(signal.SIGWINCH, resize)
            tty.setraw(stdin_fd)
            while True:
                if deadline and time.monotonic() > deadline:
                    container.kill()
                    raise TankError(f"the session ran past its {spec.timeout:.0f} s timeout and was killed")
                ready, _, _ = select.select([stdin_fd, raw], [], [], 0.5)
                if raw in ready:
                    data = raw.recv(65536)
                    if not data:
                        break
                    os.write(stdout_fd, data)
                if stdin_fd in ready:
                    data = os.read(stdin_fd, 4096)
                    if not data:
                        break
                    raw.sendall(data)
        finally:
            termios.tcsetattr(stdin_fd, termios.TCSADRAIN, old_attrs)
            signal.signal(signal.SIGWINCH, old_winch)
            with contextlib.suppress(OSError):
                sock.close()
        return int(container.wait(timeout=30).get("StatusCode", 1))
