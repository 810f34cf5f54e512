"""A second Docker daemon on this machine, the way a remote box would be set up, for the tests that need two
boxes (the matrix over hosts, push on one box and pull on another).

It runs with its own data root, socket and bridge (and no iptables changes, so the first daemon's networking
is untouched), and also listens on loopback TCP with --tlsverify and certificates made here with openssl (a
CA, a server certificate for 127.0.0.1, a client certificate). It shares the host's network, so it reaches a
registry on 127.0.0.1 as this machine's daemon does.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest
from _strict import skip_or_fail

from pufferlib.tank.engine import TlsOptions


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=cwd)


def make_certificates(folder: Path, name: str = "ca") -> None:
    """ca.pem, server-cert.pem/server-key.pem (for 127.0.0.1), cert.pem/key.pem (a client): the docker
    CLI's file names, so `folder` works as DOCKER_CERT_PATH."""
    folder.mkdir(parents=True)
    new_key = ["-newkey", "rsa:2048", "-nodes"]
    _openssl(
        "req",
        "-x509",
        *new_key,
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
        "-subj",
        f"/CN={name}",
        cwd=folder,
    )
    for who, key, cert, ext in (
        (
            "server",
            "server-key.pem",
            "server-cert.pem",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth",
        ),
        ("client", "key.pem", "cert.pem", "extendedKeyUsage=clientAuth"),
    ):
        (folder / f"{who}.ext").write_text(ext + "\n")
        _openssl("req", *new_key, "-keyout", key, "-out", f"{who}.csr", "-subj", f"/CN={who}", cwd=folder)
        sign = [
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-extfile",
            f"{who}.ext",
            "-days",
            "2",
        ]
        _openssl("x509", "-req", "-in", f"{who}.csr", *sign, "-out", cert, cwd=folder)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it is still there after 30 s."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SecondDaemon:
    unix: str  # unix:///.../docker.sock
    tcp: str  # tcp://127.0.0.1:PORT, TLS with client certificates only
    certs: Path  # ca.pem, cert.pem, key.pem (DOCKER_CERT_PATH)
    client: docker.DockerClient  # over the unix socket

    def tls(self) -> TlsOptions:
        return TlsOptions.resolve(
            verify=True,
            cacert=self.certs / "ca.pem",
            cert=self.certs / "cert.pem",
            key=self.certs / "key.pem",
        )


@contextlib.contextmanager
def second_dockerd(*extra_args: str) -> Iterator[SecondDaemon]:
    """Start the second daemon (extra_args go to dockerd); on the way out remove its containers, stop it
    and delete its bridge and data."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("dockerd", "ip", "openssl")):
        skip_or_fail("a second Docker daemon needs root, dockerd, ip (iproute2) and openssl")
    root = Path(tempfile.mkdtemp(prefix="pt-d2-", dir="/tmp"))  # short: unix socket paths are limited
    bridge = f"ptbr{uuid.uuid4().hex[:6]}"
    certs = root / "certs"
    make_certificates(certs)
    unix, tcp = f"unix://{root}/docker.sock", f"tcp://127.0.0.1:{free_port()}"
    # Never --bridge=none: dockerd then deletes the default docker0 bridge of the first daemon.
    _ip("link", "add", bridge, "type", "bridge")
    _ip("addr", "add", f"172.31.{random.randint(200, 250)}.1/24", "dev", bridge)  # apart from other runs
    _ip("link", "set", bridge, "up")
    log = open(root / "dockerd.log", "w")  # noqa: SIM115 (kept open for the daemon's lifetime)
    proc = subprocess.Popen(
        [
            "dockerd",
            "--data-root",
            str(root / "data"),
            "--exec-root",
            str(root / "exec"),
            "--pidfile",
            str(root / "docker.pid"),
            "-H",
            unix,
            "-H",
            tcp,
            "--tlsverify",
            "--tlscacert",
            str(certs / "ca.pem"),
            "--tlscert",
            str(certs / "server-cert.pem"),
            "--tlskey",
            str(certs / "server-key.pem"),
            f"--bridge={bridge}",
            "--iptables=false",
            "--ip-masq=false",
            *extra_args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    client = None
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(docker.errors.DockerException):
                client = docker.DockerClient(base_url=unix, timeout=600)
                client.ping()
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"second dockerd did not start:\n{(root / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield SecondDaemon(unix, tcp, certs, client)
    finally:
        if client is not None:
            for c in client.containers.list(all=True):
                with contextlib.suppress(docker.errors.APIError):
                    c.remove(force=True)
            client.close()
        stop(proc)
        log.close()
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("link", "del", bridge)
        shutil.rmtree(root, ignore_errors=True)
