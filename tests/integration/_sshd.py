"""A real OpenSSH server on loopback in front of a Docker engine: a box reached as ssh://root@127.0.0.1:PORT.

sshd (Debian's openssh-server; tests/run.sh installs it) runs with a config of its own on a free loopback
port, a host key and a user key made here, and `SetEnv DOCKER_HOST=...`, so the `docker system dial-stdio`
that docker's ssh:// transport runs on the far side talks to the engine the test names (the second daemon).
The client side is the real `ssh` too: `bin/ssh` here runs /usr/bin/ssh with this folder's client config (the
key, a known_hosts holding the host key, BatchMode), and goes first on PATH for the command under test.
Everything lives in one temporary folder, removed with the server on the way out.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _daemons import free_port, stop
from _strict import skip_or_fail

SSHD = "/usr/sbin/sshd"
SSH = shutil.which("ssh") or "/usr/bin/ssh"


@dataclass
class SshBox:
    url: str  # ssh://root@127.0.0.1:PORT
    folder: Path  # keys, configs, the log, bin/ssh

    def env(self, **extra: str) -> dict[str, str]:
        """os.environ with this folder's `ssh` first on PATH."""
        return {**os.environ, "PATH": f"{self.folder / 'bin'}{os.pathsep}{os.environ['PATH']}", **extra}

    def client(self) -> None:
        """bin/ssh (first on env()'s PATH): the real ssh with this box's client config."""
        path = self.folder / "bin" / "ssh"
        path.write_text(f'#!/bin/sh\nexec {SSH} -F {self.folder / "ssh_config"} "$@"\n')
        path.chmod(0o755)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@contextlib.contextmanager
def sshd_to(docker_host: str) -> Iterator[SshBox]:
    """sshd on 127.0.0.1 whose sessions have DOCKER_HOST=`docker_host`; stopped, its folder removed, after."""
    if os.geteuid() != 0 or not (
        os.path.exists(SSHD) and shutil.which("ssh-keygen") and shutil.which("docker")
    ):
        skip_or_fail("an ssh box needs root, sshd and ssh-keygen (apt-get install openssh-server) and docker")
    folder = Path(tempfile.mkdtemp(prefix="pt-ssh-", dir="/tmp"))
    port = free_port()
    _keygen(folder / "host_key")
    _keygen(folder / "user_key")
    shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
    host_key = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    (folder / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1:{port}\n"
        f"HostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "UsePAM no\n"
        "StrictModes no\n"  # the folder is under /tmp, which is world-writable
        f"SetEnv DOCKER_HOST={docker_host}\n"
    )
    (folder / "ssh_config").write_text(
        "Host *\n"
        f"  IdentityFile {folder / 'user_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        "  BatchMode yes\n  ConnectTimeout 10\n  LogLevel ERROR\n"
    )
    (folder / "bin").mkdir()
    box = SshBox(f"ssh://root@127.0.0.1:{port}", folder)
    box.client()
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation folder (the service makes it)
    log = open(folder / "sshd.log", "w")  # noqa: SIM115 (kept open for the server's lifetime)
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"sshd did not start:\n{(folder / 'sshd.log').read_text()}")
            time.sleep(0.2)
        yield box
    finally:
        stop(proc)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
