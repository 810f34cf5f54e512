"""`puffertank lab`: JupyterLab in the lib image, the workspace at /workspace, on the host's loopback.

Like `puffertank run` (tank/shell.py: same options, labels, GPUs, UID and removal on exit), with the lab
published on 127.0.0.1:PORT (all the host's addresses with --bind-all) behind a random token. The URL is
printed on stdout once the server answers; the server's own log goes to stderr. Ctrl-C, SIGTERM or SIGHUP
stops the server (it is sent SIGTERM, which JupyterLab takes as "shut down now", where its SIGINT handler
would ask a question no one can answer) and removes the container.

The token reaches the server in a config file put into the container before it starts (mode 0600, owned
by the container's user; it never touches the host's disk), never on a command line or in the container's
environment: a container's argv shows in `ps` for every user of the host, its environment in `docker
inspect`. The server is told
the token, so its log shows `?token=...` in place of it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import secrets
import signal
import socket
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request

import docker  # docker.errors comes with it
import requests

from pufferlib.tank import containers, shell
from pufferlib.tank.engine import get_client
from pufferlib.tank.errors import TankError, UsageError
from pufferlib.tank.names import UID_LABEL
from pufferlib.tank.signals import signum_of

CONTAINER_PORT = 8888
DEFAULT_PORT = 8888
CONFIG_DIR = "/tmp/puffertank-lab"  # in the container; the config file is the only thing there
CONFIG_NAME = "jupyter_server_config.json"
START_TIMEOUT = 180.0  # seconds for the server to answer (a cold start imports a lot on 2 cores)


def register(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser(
        "lab",
        help="JupyterLab in the lib image, on http://127.0.0.1:PORT (removed on exit)",
        description="Start JupyterLab in puffertank/lib:VARIANT with the workspace at /workspace, published "
        "on the host's loopback with a random token, and print the URL to open. Ctrl-C stops it. Over "
        "Tailscale: `tailscale serve --bg PORT` on the host shares the loopback port with your tailnet; "
        "--bind-all publishes it on every address of the host instead (the token is then all that guards "
        "it: share the URL only over the tailnet).",
    )
    shell._add_common(lab)
    lab.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"host port for the lab (default {DEFAULT_PORT})"
    )
    lab.add_argument(
        "--bind-all",
        action="store_true",
        help="publish on all the host's addresses (0.0.0.0), not only 127.0.0.1",
    )
    lab.set_defaults(func=cmd_lab)


def check_port(address: str, port: int) -> None:
    """UsageError (exit 2) when `port` is not a port or something on the host already listens there."""
    if not 0 < port < 65536:
        raise UsageError(f"--port {port}: not a TCP port", "pass a number from 1 to 65535, e.g. --port 8889")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed lab's TIME_WAIT is no use
        try:
            probe.bind((address, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise UsageError(
                    f"port {port} on {address} is in use (or not yours to bind)",
                    f"pick another with --port, e.g. --port {port + 1}",
                ) from exc
            raise


def server_config(token: str) -> dict:
    """Jupyter server settings: the token, and a lab that serves /workspace to the published port."""
    return {
        "IdentityProvider": {"token": token},
        "ServerApp": {
            "ip": "0.0.0.0",  # inside the container; the host side is the publish address
            "port": CONTAINER_PORT,
            "port_retries": 0,
            "open_browser": False,
            "root_dir": containers.WORKSPACE,
            "allow_root": True,  # --user host as root: the container is the sandbox Jupyter's refusal is for
        },
        "LabApp": {"extension_manager": "readonly"},  # no PyPI searches from the tank (it may be offline)
    }


def answers(port: int) -> bool:
    """Whether a Jupyter server answers on the host's loopback port (its login page needs no token)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=2) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError):
        return False


def wait_until_up(container, port: int, exited: threading.Event, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not answers(port):
        if exited.is_set():
            raise TankError("JupyterLab exited before it answered (its log is above)")
        if time.monotonic() > deadline:
            raise TankError(f"JupyterLab did not answer on port {port} within {timeout:.0f} s (log above)")
        time.sleep(0.5)


def cmd_lab(args: argparse.Namespace) -> int:
    address = "0.0.0.0" if args.bind_all else "127.0.0.1"
    if args.publish:
        raise UsageError("puffertank lab --publish: the lab's port is --port", "drop --publish")
    if args.network in ("none", "host"):
        raise UsageError(
            f"puffertank lab --network {args.network}: the lab's port cannot be published", "drop --network"
        )
    check_port(address, args.port)
    spec = shell.make_spec(args, ["jupyter", "lab", f"--config={CONFIG_DIR}/{CONFIG_NAME}"])
    spec.ports = {f"{CONTAINER_PORT}/tcp": (address, args.port)}
    client = get_client(timeout=600)
    shell._note_uid_mismatch(client, spec)
    return _serve(client, spec, args, secrets.token_urlsafe(32), address)


def _serve(client, spec: containers.RunSpec, args: argparse.Namespace, token: str, address: str) -> int:
    with containers.tracked(client, spec, shell._fix_for(args)) as container:
        client.api.put_archive(container.id, "/", config_archive(token, *_owner(client, spec)))
        stream = client.api.attach(container.id, stdout=True, stderr=True, stream=True, logs=True, demux=True)
        try:
            container.start()
        except docker.errors.APIError as exc:
            if "port is already allocated" in str(exc) or "address already in use" in str(exc):
                raise UsageError(
                    f"port {args.port} is in use", f"pick another with --port, e.g. --port {args.port + 1}"
                ) from exc
            raise TankError(f"cannot start JupyterLab from {spec.image}: {exc.explanation or exc}") from exc
        exited = threading.Event()
        threading.Thread(target=lambda: (container.wait(), exited.set()), daemon=True).start()
        threading.Thread(target=_log_to_stderr, args=(stream,), daemon=True).start()
        try:
            wait_until_up(container, args.port, exited)
            host = "127.0.0.1" if address == "127.0.0.1" else socket.gethostname()
            print(f"http://{host}:{args.port}/lab?token={token}", flush=True)
            print(
                f"puffertank lab: on {address}:{args.port}; open the URL above; Ctrl-C stops it",
                file=sys.stderr,
            )
            exited.wait()
        except KeyboardInterrupt as exc:
            containers.stop_forwarding(container, signal.SIGTERM, spec.stop_timeout, exited.wait)
            return 128 + signum_of(exc)
        return int(container.wait(timeout=30).get("StatusCode", 1))


def config_archive(token: str, uid: int, gid: int) -> bytes:
    """A tar of CONFIG_DIR (0700) holding the server config (0600), both owned by uid:gid."""
    data = json.dumps(server_config(token)).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        folder = tarfile.TarInfo(CONFIG_DIR.strip("/"))
        folder.type, folder.mode, folder.uid, folder.gid = tarfile.DIRTYPE, 0o700, uid, gid
        tar.addfile(folder)
        item = tarfile.TarInfo(f"{CONFIG_DIR.strip('/')}/{CONFIG_NAME}")
        item.size, item.mode, item.uid, item.gid = len(data), 0o600, uid, gid
        tar.addfile(item, io.BytesIO(data))
    return buf.getvalue()


def _owner(client, spec: containers.RunSpec) -> tuple[int, int]:
    """The UID:GID the server runs as: spec.user, else the image's user (its puffertank.uid label)."""
    if spec.user:
        uid, _, gid = spec.user.partition(":")
        return int(uid), int(gid or uid)
    uid = int((client.images.get(spec.image).labels or {}).get(UID_LABEL, "1000"))
    return uid, uid  # the file is 0600: only its owner matters


def _log_to_stderr(stream) -> None:
    """The server's log, stdout and stderr alike, to our stderr (stdout carries the URL alone)."""
    with contextlib.suppress(OSError, ValueError, requests.exceptions.RequestException):
        for out, err in stream:
            for chunk in (out, err):
                if chunk:
                    sys.stderr.buffer.write(chunk)
                    sys.stderr.buffer.flush()
