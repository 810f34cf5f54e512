"""Reaching a Docker engine: the local one (DOCKER_HOST or the default socket) and remote ones.

Remote engines over ssh:// (recommended: boxes on one Tailscale network reach each other by name, and the
ssh client's keys and config apply) or over TLS, with the docker CLI's semantics: `--tls` encrypts,
`--tlsverify` (or DOCKER_TLS_VERIFY set to anything) also checks the daemon's certificate, and the files
are ca.pem, cert.pem and key.pem in DOCKER_CERT_PATH (default ~/.docker) unless named. A plain tcp://
engine is refused unless asked for (`--insecure`, or PUFFERTANK_INSECURE=1 for DOCKER_HOST): anyone who
can reach its port is root on that box.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

import docker  # docker.errors, docker.tls and docker.models come with it

from pufferlib.tank.errors import TankError

DEFAULT_ADDRESS = "unix:///var/run/docker.sock"
INSECURE_ENV = "PUFFERTANK_INSECURE"


def engine_address() -> str:
    """Where the local engine is (DOCKER_HOST or the default socket)."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_ADDRESS


@dataclass(frozen=True)
class TlsOptions:
    """TLS for a tcp:// engine, as the docker CLI takes it (flags win over the environment)."""

    tls: bool = False  # encrypt (no check of the daemon's certificate unless verify)
    verify: bool = False  # encrypt and check the daemon's certificate against the CA
    cacert: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    @classmethod
    def resolve(
        cls,
        tls: bool = False,
        verify: bool | None = None,
        cacert: Path | None = None,
        cert: Path | None = None,
        key: Path | None = None,
    ) -> TlsOptions:
        """Fill in what the flags leave open from DOCKER_TLS_VERIFY, DOCKER_TLS and DOCKER_CERT_PATH."""
        if verify is None:
            verify = bool(os.environ.get("DOCKER_TLS_VERIFY"))
        tls = tls or verify or bool(os.environ.get("DOCKER_TLS"))
        folder = Path(os.environ.get("DOCKER_CERT_PATH") or Path.home() / ".docker").expanduser()

        def pick(given: Path | None, name: str) -> Path | None:
            if given is not None:
                return Path(given).expanduser()
            default = folder / name
            return default if default.is_file() else None  # like the CLI: absent defaults are skipped

        return cls(tls, verify, pick(cacert, "ca.pem"), pick(cert, "cert.pem"), pick(key, "key.pem"))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TlsOptions:
        """The options of add_tls_arguments' flags, filled in from the environment (resolve)."""
        return cls.resolve(args.tls, args.tlsverify, args.tlscacert, args.tlscert, args.tlskey)

    @property
    def enabled(self) -> bool:
        return self.tls or self.verify

    def config(self) -> docker.tls.TLSConfig:
        for what, path in (("CA certificate", self.cacert), ("certificate", self.cert), ("key", self.key)):
            if path is not None and not path.is_file():
                raise TankError(
                    f"TLS {what} {path}: no such file",
                    "put ca.pem, cert.pem and key.pem in DOCKER_CERT_PATH (default ~/.docker) or name them "
                    "with --tlscacert/--tlscert/--tlskey",
                )
        if (self.cert is None) != (self.key is None):
            raise TankError("TLS needs both a client certificate and its key", "pass --tlscert and --tlskey")
        client_cert = (str(self.cert), str(self.key)) if self.cert and self.key else None
        ca = str(self.cacert) if self.verify and self.cacert else None
        return docker.tls.TLSConfig(client_cert=client_cert, ca_cert=ca, verify=self.verify)


def add_tls_arguments(parser: argparse.ArgumentParser, insecure: bool = True) -> None:
    """The docker CLI's TLS flags for tcp:// engines, and --insecure unless not wanted, as one group
    (TlsOptions.from_args)."""
    tls = parser.add_argument_group(
        "TLS for tcp:// hosts (as the docker CLI: DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)"
    )
    tls.add_argument("--tls", action="store_true", help="encrypt (without checking the daemon's certificate)")
    tls.add_argument(
        "--tlsverify",
        action="store_true",
        default=None,
        help="encrypt and check the daemon's certificate (default: on when DOCKER_TLS_VERIFY is set)",
    )
    tls.add_argument("--tlscacert", type=Path, metavar="FILE", help="CA (default DOCKER_CERT_PATH/ca.pem)")
    tls.add_argument(
        "--tlscert", type=Path, metavar="FILE", help="client cert (default DOCKER_CERT_PATH/cert.pem)"
    )
    tls.add_argument(
        "--tlskey", type=Path, metavar="FILE", help="client key (default DOCKER_CERT_PATH/key.pem)"
    )
    if insecure:
        tls.add_argument(
            "--insecure",
            action="store_true",
            help="allow plain tcp:// (no TLS): whoever reaches the port is root there "
            "(trusted networks only)",
        )


class _TlsApi(docker.APIClient):
    """requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE (set on hosts behind a TLS proxy) replace the CA a
    session verifies with; for an engine, the CA named for it (or no check with --tls) must win."""

    def merge_environment_settings(self, url: str, proxies, stream, verify, cert) -> dict:  # requests' own
        settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
        settings["verify"] = self.verify
        return settings


class _TlsClient(docker.DockerClient):
    def __init__(self, **kwargs: object) -> None:
        self.api = _TlsApi(**kwargs)


def connect(
    url: str, tls: TlsOptions | None = None, *, insecure: bool = False, timeout: int = 120
) -> docker.DockerClient:
    """A connected SDK client for the engine at `url`, or a TankError naming the address and the fix."""
    tls = tls or TlsOptions()
    scheme = url.split("://", 1)[0] if "://" in url else "tcp"
    if scheme in ("tcp", "http") and not tls.enabled and not insecure:
        raise TankError(
            f"refusing the plain-HTTP Docker engine {url}: without TLS anyone who can reach that port is "
            "root on that machine",
            "use ssh://USER@HOST (recommended; boxes on one Tailscale network reach each other by name), or "
            "TLS: --tlsverify with ca.pem, cert.pem and key.pem in DOCKER_CERT_PATH (default ~/.docker) and "
            "the daemon on tcp://HOST:2376; --insecure (PUFFERTANK_INSECURE=1 for DOCKER_HOST) accepts the "
            "risk on a network you trust",
        )
    try:
        if scheme == "ssh":
            client = docker.DockerClient(base_url=url, use_ssh_client=True, timeout=timeout)
        elif scheme in ("tcp", "http") and tls.enabled:
            client = _TlsClient(base_url=url, tls=tls.config(), timeout=timeout)
        else:
            client = docker.DockerClient(base_url=url, timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise TankError(
            f"cannot reach the Docker engine at {url}: {_short(str(exc))}", _fix(url, exc, tls)
        ) from exc
    return client


def _fix(url: str, exc: Exception, tls: TlsOptions) -> str:
    reason = str(exc)
    if "Permission denied" in reason or "PermissionError" in reason:
        return "add your user to the 'docker' group (sudo usermod -aG docker $USER, then log in again)"
    if tls.enabled and ("SSL" in reason or "certificate" in reason.lower()):
        return (
            "check that the daemon's certificate is signed by the CA you pass (ca.pem) and names this "
            "host, and that cert.pem/key.pem are a client certificate of the same CA"
        )
    if url == engine_address() and url.startswith("unix://"):
        return "start it (sudo systemctl start docker, or run provision/setup-host.sh) or set DOCKER_HOST"
    return f"check the address, that dockerd runs there, and that `docker -H {url} info` works"


def get_client(timeout: int = 120) -> docker.DockerClient:
    """The local engine: DOCKER_HOST (with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH) or the default socket."""
    return connect(
        engine_address(), TlsOptions.resolve(), insecure=os.environ.get(INSECURE_ENV) == "1", timeout=timeout
    )


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def image_exists(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def require_image(
    client: docker.DockerClient, ref: str, fix: str, where: str = "the local Docker engine"
) -> docker.models.images.Image:
    """The image, or a TankError naming it, the engine, and the command that makes it."""
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound as exc:
        raise TankError(f"image {ref} not found in {where}", fix) from exc
