"""Containers from the image chain: how they are configured (GPUs, shared memory, workspace, user) and run.

One way to create them (`tracked`: labelled, always removed) and three ways to run them: `run_captured`
(short-lived: probes, listings, timings, tests), `run_streamed` (a command whose output is ours) and
`run_interactive` (our terminal attached). Ctrl-C, SIGTERM and SIGHUP (see tank/signals.py) are passed on
to the container's command, which gets `stop_timeout` seconds to finish (a trainer saves its checkpoint)
before it is killed; the container is removed however the run ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import sys
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import docker  # docker.types and docker.errors come with it
import requests

from pufferlib.tank.engine import require_image
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import MANAGED_LABEL
from pufferlib.tank.signals import signum_of

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
        raise TankError(f"--gpus {mode!r}: not a choice", "choose --gpus auto, all or none")
    if mode == "none":
        return []
    if not nvidia_runtime_available(client):
        if mode == "all":
            raise TankError(
                "--gpus all, but this Docker engine has no NVIDIA runtime",
                "install the NVIDIA Container Toolkit (provision/setup-host.sh does) and restart Docker, "
                "or use --gpus none",
            )
        return []
    return [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]


# /dev/shm of every container PufferTank starts (run, shell, matrix, and the dev container's runArgs, which a
# test holds to this value): PyTorch's DataLoader and multiprocessing share tensors through it, and Docker's
# 64 MB fails with "No space left on device". A container's own tmpfs, not the host's IPC namespace
# (--ipc=host lets a container see and fill the host's shared memory); it costs only what is used.
SHM_SIZE = "8g"


@dataclass
class RunSpec:
    """What `docker run` would take, in the terms PufferTank cares about."""

    image: str
    command: list[str]
    workspace: Path | None = None  # bind-mounted read-write at /workspace (the working directory)
    user: str | None = None  # "UID:GID"; None keeps the image's user
    gpus: str = "auto"
    shm_size: str | None = None  # None: SHM_SIZE; ignored with ipc_host
    ipc_host: bool = False
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    tty: bool = False
    name: str | None = None
    timeout: float | None = None  # seconds; then the container is killed (exit 124)
    network: str | None = None  # e.g. "none" for offline checks
    hostname: str = "puffertank"
    entrypoint: list[str] | None = None  # None keeps the image's (tini and our entrypoint script)
    copy_in: list[tuple[Path, str]] = field(default_factory=list)  # (host file, container dir) before start
    stop_timeout: float = 10.0  # seconds the command gets after a forwarded signal, then it is killed
    ports: dict[str, tuple[str, int]] = field(default_factory=dict)  # "6006/tcp" -> (host address, host port)

    def create_kwargs(self, client: docker.DockerClient) -> dict:
        mounts = []
        if self.workspace is not None:
            source = Path(self.workspace).expanduser().resolve()
            if not source.is_dir():
                raise TankError(f"workspace {source} is not a directory", "pass --workspace DIR")
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
        if self.entrypoint is not None:
            kwargs["entrypoint"] = self.entrypoint
        if self.user:
            kwargs["user"] = self.user
        if self.ipc_host:
            kwargs["ipc_mode"] = "host"
        else:
            kwargs["shm_size"] = self.shm_size or SHM_SIZE
        if self.network:
            kwargs["network_mode"] = self.network
        if self.ports:
            kwargs["ports"] = self.ports
        return kwargs


def _archive(files: list[tuple[Path, str]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, directory in files:
            tar.add(path, arcname=f"{directory.strip('/')}/{Path(path).name}")
    return buf.getvalue()


def remove(container: docker.models.containers.Container) -> None:
    """Remove, whatever state it is in; a container already gone is fine."""
    with contextlib.suppress(docker.errors.NotFound):
        container.remove(force=True)


@contextlib.contextmanager
def tracked(
    client: docker.DockerClient, spec: RunSpec, fix: str = "puffertank build"
) -> Iterator[docker.models.containers.Container]:
    """A created (not started) container, its files copied in, removed when the block ends however it ends
    (also when a signal lands while the engine is still creating it: it is found by its name)."""
    require_image(client, spec.image, fix)
    kwargs = spec.create_kwargs(client)
    try:
        container = client.containers.create(**kwargs)
    except docker.errors.APIError as exc:
        raise TankError(f"cannot create a container from {spec.image}: {exc.explanation or exc}") from exc
    except BaseException:
        with contextlib.suppress(docker.errors.DockerException):
            remove(client.containers.get(kwargs["name"]))
        raise
    try:
        if spec.copy_in:
            client.api.put_archive(container.id, "/", _archive(spec.copy_in))
        yield container
    finally:
        try:
            remove(container)
        except KeyboardInterrupt:  # a second signal while removing: finish removing, then stop
            remove(container)
            raise


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


def run_captured(client: docker.DockerClient, spec: RunSpec, fix: str = "puffertank build") -> Result:
    """Run to completion (or spec.timeout: killed, exit 124), collect stdout and stderr, remove.

    The one runner for short-lived containers: probes, listings, timings, tests.
    """
    start = time.monotonic()
    with tracked(client, spec, fix) as container:
        try:
            container.start()
        except docker.errors.APIError as exc:  # e.g. the command is not in the image: not a puffertank image
            raise TankError(
                f"cannot start {spec.command[0] if spec.command else 'the command'} in {spec.image}: "
                f"{exc.explanation or exc}",
                fix,
            ) from None
        timed_out = False
        try:
            code = int(container.wait(timeout=spec.timeout).get("StatusCode", 1))
        except requests.exceptions.ConnectionError:  # ReadTimeout: still running at the timeout
            timed_out, code = True, TIMEOUT_EXIT
            with contextlib.suppress(docker.errors.APIError):
                container.kill()
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace")
    return Result(code, out, err, timed_out, time.monotonic() - start)


def _waited(container: docker.models.containers.Container, seconds: float) -> bool:
    """Whether the container exits within `seconds`."""
    try:
        container.wait(timeout=seconds)
    except requests.exceptions.ConnectionError:
        return False
    return True


def stop_forwarding(
    container: docker.models.containers.Container,
    signum: int,
    grace: float,
    exited: Callable[[float], bool],
) -> int:
    """Pass the signal we got to the container's command (tini hands it on), give it `grace` seconds to
    finish, then kill it. Returns its exit code, or 128 + signum when it had to be killed."""
    name = signal.Signals(signum).name
    _say(f"\npuffertank: {name}: passing it to the container's command ({grace:.0f} s to finish)")
    with contextlib.suppress(docker.errors.APIError):
        container.kill(signal=signum)
    try:
        finished = exited(grace)
    except KeyboardInterrupt:  # a second signal: do not wait any longer
        finished = False
    if not finished:
        _say(f"puffertank: the command did not finish within {grace:.0f} s; killing the container")
        with contextlib.suppress(docker.errors.APIError):
            container.kill()
        return 128 + signum
    with contextlib.suppress(docker.errors.DockerException, requests.exceptions.ConnectionError):
        return int(container.wait(timeout=10).get("StatusCode", 128 + signum))
    return 128 + signum


def _say(message: str) -> None:
    """A note on stderr that must not fail: after SIGHUP the terminal may be gone."""
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


class _Exit:
    """Waits for the container in a thread, so the main thread stays free to take signals."""

    def __init__(self, container: docker.models.containers.Container) -> None:
        self.code: int | None = None
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._wait, args=(container,), daemon=True)
        self._thread.start()

    def _wait(self, container: docker.models.containers.Container) -> None:
        try:
            self.code = int(container.wait().get("StatusCode", 1))
        except (docker.errors.DockerException, requests.exceptions.RequestException):
            self.code = None
        finally:
            self.done.set()


def _copy_output(stream: Iterator[tuple[bytes | None, bytes | None]]) -> None:
    with contextlib.suppress(OSError, ValueError, requests.exceptions.RequestException):
        for out, err in stream:
            if out:
                sys.stdout.buffer.write(out)
                sys.stdout.buffer.flush()
            if err:
                sys.stderr.buffer.write(err)
                sys.stderr.buffer.flush()


def run_streamed(client: docker.DockerClient, spec: RunSpec, fix: str = "puffertank build") -> int:
    """Run without a terminal, copying its output to ours as it comes; return its exit code.

    A signal (Ctrl-C, SIGTERM, SIGHUP) is passed on to the command (see stop_forwarding); spec.timeout
    kills it (exit 124).
    """
    with tracked(client, spec, fix) as container:
        stream = client.api.attach(container.id, stdout=True, stderr=True, stream=True, logs=True, demux=True)
        container.start()
        exit_ = _Exit(container)
        copier = threading.Thread(target=_copy_output, args=(stream,), daemon=True)
        deadline = time.monotonic() + spec.timeout if spec.timeout else None
        try:
            # started within the try: once the command's output shows, a signal must find us forwarding
            copier.start()
            while not exit_.done.wait(0.25):
                if deadline is not None and time.monotonic() > deadline:
                    with contextlib.suppress(docker.errors.APIError):
                        container.kill()
                    exit_.done.wait(30)
                    copier.join(timeout=5)
                    _say(f"puffertank: timed out after {spec.timeout:.0f} s; the container was killed")
                    return TIMEOUT_EXIT
        except KeyboardInterrupt as exc:
            code = stop_forwarding(container, signum_of(exc), spec.stop_timeout, exit_.done.wait)
            copier.join(timeout=2)
            return code
        copier.join(timeout=10)
        if exit_.code is None:
            raise TankError(f"lost the connection to the Docker engine while {spec.image} ran")
        return exit_.code


def run_interactive(client: docker.DockerClient, spec: RunSpec, fix: str = "puffertank build") -> int:
    """Run with our terminal attached (like `docker run -it --rm`): raw keystrokes in, output out, the
    window size followed. Return the container's exit code.

    Ctrl-C is a keystroke for the container; SIGTERM and SIGHUP (the terminal or the SSH session went away)
    are passed on to its command, as by run_streamed.
    """
    import termios
    import tty

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise TankError(
            "an interactive session needs a terminal", "run it in a terminal, or use puffertank run"
        )
    spec.tty = True
    stdin_fd, stdout_fd = sys.stdin.fileno(), sys.stdout.fileno()
    with tracked(client, spec, fix) as container:
        sock = client.api.attach_socket(
            container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        raw = getattr(sock, "_sock", sock)

        def resize(*_: object) -> None:
            with contextlib.suppress(OSError, docker.errors.APIError):
                size = os.get_terminal_size(stdout_fd)
                client.api.resize(container.id, height=size.lines, width=size.columns)

        old_attrs = termios.tcgetattr(stdin_fd)
        old_winch = signal.getsignal(signal.SIGWINCH)
        deadline = time.monotonic() + spec.timeout if spec.timeout else None
        interrupted: KeyboardInterrupt | None = None
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
        except KeyboardInterrupt as exc:
            interrupted = exc
        finally:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(stdin_fd, termios.TCSADRAIN, old_attrs)
            signal.signal(signal.SIGWINCH, old_winch)
            with contextlib.suppress(OSError):
                sock.close()
        if interrupted is not None:
            grace = spec.stop_timeout
            return stop_forwarding(container, signum_of(interrupted), grace, lambda s: _waited(container, s))
        try:
            return int(container.wait(timeout=30).get("StatusCode", 1))
        except requests.exceptions.ConnectionError as exc:
            raise TankError(
                "the session's terminal closed but its container did not exit within 30 s; it was removed"
            ) from exc
